// Exposure is told (SPEC §5), end to end with the built daemon and a real sshd: a SOCKS
// proxy on every address runs (a warning, not a refusal) and the daemon's log says who
// can reach it; an -R publishing the daemon's own API on every address of the server,
// added through POST /config/new, gets the warning in that answer, in the log, in
// /health/details and `tunnel-cli status`, and never in the open /health; `check`
// prints both and still exits 0, as documented in docs/security.md.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, MAIN, port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let d: Daemon;
let socksPort: number;
let remotePort: number;

const socks = (p: number, alias: string) => `tunnels:\n  - name: open-proxy\n    remote_host: ${alias}\n    local_port: "0.0.0.0:${p}"\n    direction: socks\n`;

/** The exposure_warning lines of the daemon's log, parsed. */
const warned = (log: string) =>
  log
    .split('\n')
    .filter((l) => l.includes('"event":"exposure_warning"'))
    .map((l) => JSON.parse(l) as { tunnel: string; hash: string; line: number; warning: string });

function run(bin: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', HOME: server.dir, ...env } }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  server = await sshd();
  socksPort = await port();
  remotePort = await port();
  d = await startDaemon({ config: socks(socksPort, server.alias), sshConfigPath: server.sshConfigPath });
}, 60_000);

afterAll(async () => {
  await d?.cleanup();
  await server?.stop();
});

describe('exposure is told, not refused', () => {
  it('a SOCKS proxy on 0.0.0.0 runs, and the log says at load who can use it', async () => {
    await d.waitState('open-proxy', 'RUNNING');
    const lines = warned(d.stderr());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ tunnel: 'open-proxy', line: 2 });
    expect(lines[0]!.warning).toBe(
      `its SOCKS proxy listens on every address of this machine (0.0.0.0:${socksPort}): anyone who can reach this machine can use it as a proxy from ${server.alias} into every network ${server.alias} reaches, its own loopback services included; bind it to 127.0.0.1 unless that is meant`,
    );
  });

  it('POST /config/new of an -R publishing the daemon\'s own API: 201, written and run, with the warning in the answer and the log', async () => {
    const body = { name: 'api-out', remote_host: server.alias, remote_port: `0.0.0.0:${remotePort}`, local_port: `127.0.0.1:${d.apiPort}`, direction: 'local_to_remote' };
    const r = await d.api('/config/new', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(r.status).toBe(201);
    const answer = (await r.json()) as { hash: string; warnings: string[] };
    const told = `it forwards the daemon's API (127.0.0.1:${d.apiPort}) to 0.0.0.0:${remotePort} on ${server.alias}: anyone who can reach ${server.alias} gets to it as this machine's own account, and with it can start, stop and rewrite every tunnel (TUNNEL_API_TOKEN, when set, is still asked for)`;
    expect(answer.warnings).toEqual([told]);
    // The reload logs the new one; the SOCKS proxy, unchanged, is not told again.
    await d.waitFor('the new warning logged', async () => warned(d.stderr()).length === 2 || undefined);
    expect(warned(d.stderr()).map((w) => [w.tunnel, w.warning])).toEqual([
      ['open-proxy', expect.stringMatching(/^its SOCKS proxy/)],
      ['api-out', told],
    ]);
    // It is not refused: the daemon runs it.
    await d.waitState('api-out', 'RUNNING');
  });

  it('/health/details lists both with who can reach them; /health, open to all, names neither', async () => {
    const details = await d.json('/health/details');
    expect(details.exposure.map((e: { name: string; kind: string }) => [e.name, e.kind])).toEqual([
      ['open-proxy', 'open_listener'],
      ['api-out', 'own_listener'],
    ]);
    const open = await (await d.api('/health')).text();
    expect(JSON.parse(open)).toEqual({ ok: true, loading: false, config: { valid: true, error: null, missing: false, problems: 0 }, tunnels: 2, running: 2 });
  });

  it('tunnel-cli status tells them above the table', async () => {
    const r = await run(CLI, ['status'], { TUNNEL_SOCKET: d.socketPath });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^2 exposure warnings \(these tunnels open a port to more than this machine\):\n {2}open-proxy \([0-9a-f]{8}, line 2\): its SOCKS proxy listens on every address of this machine/);
    expect(r.stdout).toMatch(/\n {2}api-out \([0-9a-f]{8}, line \d+\): it forwards the daemon's API/);
  });

  it('check prints both and exits 0: warnings are not problems', async () => {
    const dir = join(d.dir, 'check');
    mkdirSync(dir);
    const config = join(dir, 'config.yaml');
    // The daemon this environment would start listens on --listen: -R to it is a forward of its API.
    writeFileSync(config, `${socks(socksPort, server.alias)}  - name: api-out\n    remote_host: ${server.alias}\n    remote_port: "0.0.0.0:${remotePort}"\n    local_port: 18181\n    direction: local_to_remote\n`, { mode: 0o600 });
    const r = await run(MAIN, ['check', '--config', config, '--ssh-config', server.sshConfigPath, '--state-dir', join(dir, 'state'), '--listen', '127.0.0.1:18181']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain(
      '2 exposure warnings (these tunnels run as written, and open a port to more than this machine):\n' +
        `- tunnel "open-proxy" (line 2): its SOCKS proxy listens on every address of this machine (0.0.0.0:${socksPort}): `,
    );
    expect(r.stdout).toContain(`- tunnel "api-out" (line 6): it forwards the daemon's API (127.0.0.1:18181) to 0.0.0.0:${remotePort} on ${server.alias}: `);
    expect(r.stdout).toMatch(/\nno problems found, but 2 exposure warnings above\n$/);
    // Without those tunnels, the last line is as before.
    writeFileSync(config, `tunnels:\n  - name: private\n    remote_host: ${server.alias}\n    remote_port: 5432\n    local_port: 15432\n`, { mode: 0o600 });
    const clean = await run(MAIN, ['check', '--config', config, '--ssh-config', server.sshConfigPath, '--state-dir', join(dir, 'state')]);
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.stdout).not.toContain('exposure');
    expect(clean.stdout).toMatch(/\nno problems found\n$/);
  });
});
