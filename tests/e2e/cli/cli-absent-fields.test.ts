// The built tunnel-cli against the built daemon with entries that leave fields out, as
// configs written for autossh-tunnel-dockerized do (no direction) and as a SOCKS tunnel
// does (no remote_port): every table and line shows what the absent field means, and
// `hash` gives each entry the daemon's hash. No sshd is needed: what is shown of an
// entry does not depend on its ssh (here a host that does not resolve).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, port, startDaemon, type Daemon } from '../daemon-harness.js';

let dir: string;
let daemon: Daemon;
let ports: number[];
const NOTHING = /\bundefined\b|\bnull\b|\[object Object\]|\bNaN\b/;

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, '--socket', daemon.socketPath, ...args], { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (e, stdout, stderr) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr });
    });
  });
}

const config = (extra = '') => `tunnels:
  - name: nodir
    remote_host: nowhere.invalid
    remote_port: 5432
    local_port: ${ports[0]}
  - name: proxy
    remote_host: nowhere.invalid
    local_port: ${ports[1]}
    direction: socks
  - name: tilde
    remote_host: nowhere.invalid
    remote_port: 5433
    local_port: ${ports[2]}
    direction: ~
  - remote_host: nowhere.invalid
    remote_port: ""
    local_port: "127.0.0.1:${ports[3]}"
    direction: socks
${extra}`;

const row = (table: string, name: string) => table.split('\n').find((l) => l.startsWith(`${name} `)) ?? `(no row ${name})`;
const hashOf = async (name: string) => ((await daemon.json<{ name: string; hash: string }[]>('/list')).find((t) => t.name === name) ?? { hash: '' }).hash;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tm-cli-absent-'));
  const sshConfig = join(dir, 'ssh_config');
  writeFileSync(sshConfig, '');
  ports = [await port(), await port(), await port(), await port()];
  daemon = await startDaemon({ config: config(), sshConfigPath: sshConfig });
  await daemon.waitFor('four tunnels loaded', async () => (await daemon.json<unknown[]>('/status')).length === 4);
}, 60_000);

afterAll(async () => {
  await daemon?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fields an entry leaves out', () => {
  it('list: no direction is remote to local; a SOCKS tunnel has - as its remote port', async () => {
    const r = await cli('list');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(NOTHING);
    expect(row(r.stdout, 'nodir')).toMatch(new RegExp(`^nodir +[0-9a-f]{8} +remote to local +nowhere\\.invalid +5432 +${ports[0]}$`));
    expect(row(r.stdout, 'tilde')).toMatch(new RegExp(`^tilde +[0-9a-f]{8} +remote to local +nowhere\\.invalid +5433 +${ports[2]}$`));
    expect(row(r.stdout, 'proxy')).toMatch(new RegExp(`^proxy +[0-9a-f]{8} +SOCKS proxy +nowhere\\.invalid +- +${ports[1]}$`));
    expect(row(r.stdout, 'unnamed')).toMatch(new RegExp(`^unnamed +[0-9a-f]{8} +SOCKS proxy +nowhere\\.invalid +- +127\\.0\\.0\\.1:${ports[3]}$`));
  });

  it('status, stop and logs: nothing undefined', async () => {
    for (const args of [['status'], ['stop'], ['logs'], ['stop-tunnel', (await hashOf('proxy')).slice(0, 8)]]) {
      const r = await cli(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout, args.join(' ')).not.toMatch(NOTHING);
    }
    expect(row((await cli('status')).stdout, 'nodir')).toMatch(/^nodir +[0-9a-f]{8} +remote to local /);
  });

  it('show-tunnel: a SOCKS tunnel\'s remote_port is -; a direction written as ~ says how it runs', async () => {
    const socks = await cli('show-tunnel', await hashOf('proxy'));
    expect(socks.code, socks.stderr).toBe(0);
    expect(socks.stdout).toMatch(/^remote_port +-$/m);
    expect(socks.stdout).toMatch(/^direction +socks$/m);
    const tilde = await cli('show-tunnel', await hashOf('tilde'));
    expect(tilde.stdout).toMatch(/^direction +~ \(runs as remote_to_local\)$/m);
    const nodir = await cli('show-tunnel', await hashOf('nodir'));
    expect(nodir.stdout).toMatch(/^direction +remote_to_local$/m);
    for (const r of [socks, tilde, nodir]) expect(r.stdout).not.toMatch(NOTHING);
  });

  it('hash: each entry\'s hash as the daemon has it, from the same fields as written', async () => {
    const cases: [string, string[]][] = [
      ['nodir', ['nodir', 'nowhere.invalid', '5432', String(ports[0])]],
      ['proxy', ['proxy', 'nowhere.invalid', '', String(ports[1]), 'socks']],
      ['unnamed', ['', 'nowhere.invalid', '', `127.0.0.1:${ports[3]}`, 'socks']],
    ];
    for (const [name, args] of cases) {
      const r = await cli('hash', ...args);
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stdout, name).toBe(`${await hashOf(name)}\n`);
    }
    const shifted = await cli('hash', 'proxy', 'nowhere.invalid', String(ports[1]), 'socks');
    expect(shifted.code).toBe(2);
    expect(shifted.stderr).toBe(
      `tunnel-cli: hash: local_port (the 4th argument): expected a port 1-65535, or "ip:port" (IPv4, [IPv6] or host name), found "socks", a direction: a SOCKS tunnel has no remote_port; pass an empty one: tunnel-cli hash proxy nowhere.invalid "" ${ports[1]} socks\n`,
    );
  });

  it('validate and reload: entries left out while the others run are told as such', async () => {
    daemon.writeConfig(config(`  - name: bad\n    remote_host: nowhere.invalid\n    remote_port: 99999\n    local_port: ${await port()}\n`));
    const v = await daemon.waitFor('the bad entry noticed', async () => {
      const r = await cli('validate');
      return r.code === 1 ? r : undefined;
    });
    expect(v.stdout).toMatch(/^the config file has problems: 1 entry left out, the valid ones run \(nothing running was stopped or changed\):\nline \d+, column \d+: tunnels\[4\]\.remote_port: .*"99999"\n$/);
    const r = await cli('reload');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^reloaded: 0 added, 0 removed, 4 unchanged; 1 left out \(nothing running was stopped or changed\):\n {2}line \d+/);
  });
});
