// The built daemon against a real sshd: both directions carry data, hot reload
// touches only what changed, an invalid file keeps the last good config, SIGTERM
// leaves no ssh child, hostile values never reach ssh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { echoServer, port, roundTrip, sshChildren, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let echo: { close(): Promise<void> };
let echoPort: number;

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
});
afterAll(async () => {
  await echo?.close();
  await server?.stop();
});

const tunnel = (name: string, fields: Record<string, string | number>) =>
  `  - name: ${name}\n` + Object.entries(fields).map(([k, v]) => `    ${k}: ${typeof v === 'number' ? v : JSON.stringify(v)}\n`).join('');

describe('the built daemon with a real sshd', () => {
  let d: Daemon;
  let lPort: number;
  let rPort: number;
  let addPort: number;
  let base: string;

  beforeAll(async () => {
    lPort = await port();
    rPort = await port();
    addPort = await port();
    base =
      '# tunnels for the end-to-end test\ntunnels:\n' +
      tunnel('bring', { remote_host: 'testhost', remote_port: echoPort, local_port: lPort, direction: 'remote_to_local' }) +
      '    # a comment inside an entry\n' +
      tunnel('expose', { remote_host: 'testhost', remote_port: `127.0.0.1:${rPort}`, local_port: echoPort, direction: 'local_to_remote' });
    d = await startDaemon({ config: base, sshConfigPath: server.sshConfigPath });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('brings both tunnels to RUNNING and carries data both ways', async () => {
    const bring = await d.waitState('bring', 'RUNNING');
    const expose = await d.waitState('expose', 'RUNNING');
    expect(bring.pid).toBeGreaterThan(0);
    expect(expose.pid).toBeGreaterThan(0);
    expect(await roundTrip(lPort, 'through -L')).toBe('through -L');
    expect(await roundTrip(rPort, 'through -R')).toBe('through -R');
  });

  it('serves /health with the config state and counts, and /health/details with the rest', async () => {
    const h = await d.json('/health');
    expect(h).toEqual({ ok: true, loading: false, config: { valid: true, error: null, missing: false, problems: 0 }, tunnels: 2, running: 2 });
    const details = await d.json('/health/details');
    expect(details).toEqual({ ...h, config: { ...h.config, applied: 'all', rejected: [], warnings: [] }, exposure: [], config_path: d.configPath });
  });

  it('reload adds a tunnel and leaves unchanged ones alone (same pid)', async () => {
    const before = await d.json<any[]>('/status');
    const pids = Object.fromEntries(before.map((t) => [t.name, t.pid]));
    d.writeConfig(base + tunnel('added', { remote_host: 'testhost', remote_port: echoPort, local_port: addPort, direction: 'remote_to_local' }));
    await d.waitState('added', 'RUNNING');
    expect(await roundTrip(addPort, 'added')).toBe('added');
    const after = await d.json<any[]>('/status');
    for (const name of ['bring', 'expose']) expect(after.find((t) => t.name === name).pid).toBe(pids[name]);
  });

  it('an invalid file changes nothing and its error (line, column) is reported until fixed', async () => {
    const before = await d.json<any[]>('/status');
    d.writeConfig('tunnels:\n  - name: broken\n    remote_port: [unclosed\n');
    const h = await d.waitFor('config invalid', async () => {
      const body = await d.json('/health/details');
      return body.config.valid === false ? body : undefined;
    });
    expect(h.config.error).toMatch(/line \d+, column \d+/);
    // /health, open to everyone, says that there is a problem, not which or where.
    const open = await d.json('/health');
    expect(open.config).toMatchObject({ valid: false, missing: false });
    expect(open.config.problems).toBeGreaterThan(0);
    expect(JSON.stringify(open)).not.toMatch(/line \d|column|broken|remote_port|tunnels\[/);
    const during = await d.json<any[]>('/status');
    expect(during.map((t) => [t.name, t.pid, t.status])).toEqual(before.map((t) => [t.name, t.pid, t.status]));
    expect(await roundTrip(lPort, 'still up')).toBe('still up');
    d.writeConfig(base);
    await d.waitFor('config valid again', async () => (await d.json('/health')).config.valid === true);
  });

  it('reload removes a tunnel and its ssh child', async () => {
    await d.waitFor('added removed', async () => !(await d.json<any[]>('/status')).some((t) => t.name === 'added'));
    await d.waitFor('port freed', async () => roundTrip(addPort, 'x', '127.0.0.1', 500).then(() => false, () => true));
  });

  it('a deleted file keeps the last good config running and /health says it is missing', async () => {
    const { rmSync, writeFileSync } = await import('node:fs');
    rmSync(d.configPath);
    await d.waitFor('missing reported', async () => (await d.json('/health')).config.missing === true);
    expect(await roundTrip(lPort, 'kept')).toBe('kept');
    writeFileSync(d.configPath, base);
    await d.waitFor('file back', async () => (await d.json('/health')).config.missing === false);
  });

  it('recovers after its ssh child is killed with -9', async () => {
    const before = await d.waitState('bring', 'RUNNING');
    process.kill(before.pid, 'SIGKILL');
    const after = await d.waitFor('restarted', async () => {
      const t = (await d.json<any[]>('/status')).find((x) => x.name === 'bring');
      return t.status === 'RUNNING' && t.pid !== before.pid ? t : undefined;
    });
    expect(after.restarts).toBeGreaterThan(before.restarts);
    expect(await roundTrip(lPort, 'again')).toBe('again');
  });

  it('SIGHUP reads the config file again (a reload with nothing changed)', async () => {
    const reloads = async () => {
      const text = await (await d.api('/metrics')).text();
      const m = /^config_reloads_total\{result="ok"\} (\d+)/m.exec(text);
      return Number(m?.[1] ?? NaN);
    };
    const before = await reloads();
    expect(before).toBeGreaterThan(0);
    const pids = (await d.json<any[]>('/status')).map((t) => t.pid);
    d.child.kill('SIGHUP');
    await d.waitFor('a reload after SIGHUP', async () => (await reloads()) > before);
    expect((await d.json<any[]>('/status')).map((t) => t.pid)).toEqual(pids);
  });

  it('SIGTERM ends the daemon and leaves no ssh child behind', async () => {
    const pids = (await d.json<any[]>('/status')).map((t) => t.pid).filter(Boolean);
    expect(pids.length).toBe(2);
    expect(await d.stop('SIGTERM')).toBe(0);
    expect(sshChildren(d.dir)).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(existsSync(d.socketPath)).toBe(false);
  });
});

describe('hostile config values', () => {
  it('never reach ssh: the file is refused with the field named, and nothing runs', async () => {
    const marker = join(server.dir, `pwned-${process.pid}`);
    const p = await port();
    const cases = [
      `-oProxyCommand=touch ${marker}`,
      `testhost -oProxyCommand=touch${marker}`,
    ];
    for (const host of cases) {
      const d = await startDaemon({
        config: 'tunnels:\n' + tunnel('evil', { remote_host: host, remote_port: 22, local_port: p, direction: 'remote_to_local' }),
        sshConfigPath: server.sshConfigPath,
      });
      try {
        const h = await d.json('/health/details');
        expect(h.config.valid).toBe(false);
        expect(h.config.error).toMatch(/remote_host/);
        expect(await d.json('/status')).toEqual([]);
        expect(sshChildren(d.dir)).toEqual([]);
      } finally {
        await d.cleanup();
      }
    }
    const d = await startDaemon({
      config: `ssh_options:\n  ProxyCommand: touch ${marker}\ntunnels:\n` + tunnel('evil', { remote_host: 'testhost', remote_port: 22, local_port: p, direction: 'remote_to_local' }),
      sshConfigPath: server.sshConfigPath,
    });
    try {
      const h = await d.json('/health/details');
      expect(h.config.valid).toBe(false);
      expect(h.config.error).toMatch(/ProxyCommand/);
    } finally {
      await d.cleanup();
    }
    expect(existsSync(marker)).toBe(false);
  });
});

describe('settings', () => {
  it('refuses a non-loopback --listen without TUNNEL_API_TOKEN', async () => {
    const { execa } = await import('execa');
    const { MAIN } = await import('../daemon-harness.js');
    const r = await execa(process.execPath, [MAIN, '--listen', '0.0.0.0:18999', '--config', '/nonexistent/config.yaml'], { reject: false, env: { TUNNEL_API_TOKEN: '' } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/refusing to listen on 0\.0\.0\.0:18999 without TUNNEL_API_TOKEN/);
  });

  it('rejects a bad --direction-mode with the allowed values', async () => {
    const { execa } = await import('execa');
    const { MAIN } = await import('../daemon-harness.js');
    const r = await execa(process.execPath, [MAIN, '--direction-mode', 'sideways'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/expected default or ssh-standard, found "sideways"/);
  });

  it('rejects an unknown command', async () => {
    const { execa } = await import('execa');
    const { MAIN } = await import('../daemon-harness.js');
    const r = await execa(process.execPath, [MAIN, 'frobnicate'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/frobnicate/);
  });
});
