// The built tunnel-cli (dist/cli/main.js) against the real listeners serving the API
// over an in-memory engine: every command, --json, exit codes, socket and URL + token.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDaemonApp } from '../../../src/api/app.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { startListeners, type Listeners } from '../../../src/api/server.js';
import { ConfigStore } from '../../../src/config-edit/store.js';
import { stringify } from 'yaml';
import type { StatusRecord } from '../../../src/tunnel/status.js';
import { FakeEngine, SAMPLE } from '../../unit/api/fake-engine.js';

const CLI = join(resolve(dirname(fileURLToPath(import.meta.url)), '../../..'), 'dist/cli/main.js');
const TOKEN = 'e2e-token-0099';

let dir: string;
let socketPath: string;
let engine: FakeEngine;
let listeners: Listeners;
let base: string;

interface Run { code: number | null; stdout: string; stderr: string }

/** Runs the built CLI asynchronously (the server lives in this process). */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 }, (e, stdout, stderr) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr });
    });
  });
}
const sock = (...args: string[]) => cli(['--socket', socketPath, ...args]);

async function api(path: string, method = 'GET'): Promise<string> {
  const r = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
  return r.text();
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  dir = mkdtempSync(join(tmpdir(), 'tm-cli-'));
  socketPath = join(dir, 'run', 'api.sock');
  engine = new FakeEngine(SAMPLE);
  const metrics = createMetrics(engine, { processMetrics: false });
  // The file the engine's tunnels come from, for the commands that read it (show-tunnel).
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, stringify({ tunnels: SAMPLE }));
  const configFile = new ConfigStore({ path: configPath, writer: 'api', mode: 'default', backupDir: join(dir, 'backups'), keepBackups: 3, log: () => undefined });
  listeners = await startListeners({
    tcpApp: createDaemonApp({ engine, configFile, transport: 'tcp', tokens: [TOKEN], metrics }),
    socketApp: createDaemonApp({ engine, configFile, transport: 'socket', tokens: null, metrics }),
    listen: { host: '127.0.0.1', port: 0 },
    socketPath,
    tokens: [TOKEN],
  });
  base = `http://127.0.0.1:${listeners.tcpPort}`;
});

afterAll(async () => {
  await listeners?.close();
  engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await engine.supervisor.stopAll();
  engine.outcomes.clear();
  engine.delayMs = 30;
  engine.health = { ...engine.health, valid: true, error: null };
});

const hashOf = (name: string) => engine.tunnels().find((t) => t.name === name)!.hash;

describe('reading', () => {
  it('list: a table, and --json equal to the API body', async () => {
    const human = await sock('list');
    expect(human.code).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^NAME +HASH +DIRECTION +REMOTE HOST +REMOTE +LOCAL$/);
    expect(human.stdout).toMatch(new RegExp(`db +${hashOf('db').slice(0, 8)} +remote to local +user@bastion +5432 +127\\.0\\.0\\.1:15432`));
    expect(human.stdout).not.toContain('\x1b[');
    const json = await sock('list', '--json');
    expect(json.code).toBe(0);
    expect(json.stdout).toBe(`${await api('/list')}\n`);
  });

  it('status: a table, and --json equal to the API body', async () => {
    await engine.supervisor.start(hashOf('db'));
    await new Promise((r) => setTimeout(r, 60));
    const human = await sock('status');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^NAME +HASH +DIRECTION +STATE +UPTIME +RESTARTS +LAST ERROR +HEALTH$/m);
    expect(human.stdout).toMatch(/^db +[0-9a-f]{8} +remote to local +RUNNING +up \d+s +0 +- +ok$/m);
    expect(human.stdout).toMatch(/^web +[0-9a-f]{8} +local to remote +STOPPED +- +0 +- +-$/m);
    const json = await sock('status', '--json');
    expect(json.stdout).toBe(`${await api('/status')}\n`);
  });

  it('status shows the config file problem above the table', async () => {
    engine.health = { ...engine.health, valid: false, error: 'line 4, column 18: tunnels[0].remote_port: expected a port 1-65535, found "99999"' };
    const r = await sock('status');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^config file invalid, the last good config keeps running:\n {2}line 4, column 18: .*99999/);
  });

  it('logs: the lines, and --json equal to the API body', async () => {
    const h = hashOf('web');
    engine.log(h, 'debug1: remote forward success for: listen 0.0.0.0:8081');
    const r = await sock('logs', h.slice(0, 5));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('debug1: remote forward success for: listen 0.0.0.0:8081\n');
    expect((await sock('logs', h, '--json')).stdout).toBe(`${await api(`/logs/${h}`)}\n`);
  });

  it('logs without a hash: which tunnels have output; --json equal to GET /logs', async () => {
    const h = hashOf('web');
    engine.log(h, 'Connection refused');
    const r = await sock('logs');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^NAME +HASH +LINES +LAST LINE AT\\nweb +${h.slice(0, 8)} +\\d+ +\\d{4}-`));
    expect((await sock('logs', '--json')).stdout).toBe(`${await api('/logs')}\n`);
  });

  it('show-tunnel: the entry as written and its state; --json has both', async () => {
    const h = hashOf('web');
    const r = await sock('show-tunnel', h.slice(0, 8));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^name +web\n/);
    expect(r.stdout).toContain(`hash         ${h}\n`);
    expect(r.stdout).toContain('remote_port  0.0.0.0:8081\n');
    expect(r.stdout).toMatch(/status +(STOPPED|RUNNING|STARTING)\n/);
    const j = JSON.parse((await sock('show-tunnel', h, '--json')).stdout) as { tunnel: { hash: string }; status: { hash: string } };
    expect(j.tunnel.hash).toBe(h);
    expect(j.status.hash).toBe(h);
    const none = await sock('show-tunnel', 'ffff0000');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^tunnel-cli: no tunnel has a hash starting with ffff0000/);
  });

  it('validate: 0 and a sentence for a valid file, 1 and the problems for an invalid one', async () => {
    const ok = await sock('validate');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('the config file is valid\n');
    engine.health = { ...engine.health, valid: false, error: 'line 4, column 18: tunnels[0].remote_port: expected a port 1-65535, found "99999"' };
    const bad = await sock('validate');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('line 4, column 18: tunnels[0].remote_port');
    engine.health = { ...engine.health, valid: true, error: null };
  });

  it('hash: the reference formula, without a daemon; ports keep their text', async () => {
    const r = await cli(['--socket', join(dir, 'nowhere.sock'), 'hash', 'db', 'user@bastion', '05432', '127.0.0.1:15432']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('759a55c68f91a719998ccd1405be97e1\n');
    expect((await cli(['hash', '', 'h', '1', '2', 'local_to_remote', 'true'])).stdout).toBe('d0bab6b25e86e873200793594c663f67\n');
    const bad = await cli(['hash', 'a', 'b', '1', '2', 'remote_to_local', 'maybe']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tunnel-cli: hash: interactive \(the 6th argument\): expected true or false \(also yes or no, in any case\), found "maybe"\n$/);
    // Every argument is checked as its field in the config file: a port is a port.
    const port = await cli(['hash', 'socks', 'testhost', '21090', 'socks']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/^tunnel-cli: hash: local_port \(the 4th argument\): expected a port 1-65535, .*found "socks"/);
  });
});

describe('starting and stopping', () => {
  it('restart-tunnel stops, starts and waits until RUNNING with a new pid; restart does it for all', async () => {
    engine.delayMs = 100;
    const h = hashOf('db');
    expect((await sock('start-tunnel', h)).code).toBe(0);
    const pid = engine.supervisor.status(h)!.pid;
    const r = await sock('restart-tunnel', h.slice(0, 8));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^db \\(${h.slice(0, 8)}\\): RUNNING`));
    expect(engine.supervisor.status(h)!.pid).not.toBe(pid);
    const all = await sock('restart');
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/db .*RUNNING/);
    await engine.supervisor.stopAll();
  });

  it('start-tunnel waits until RUNNING and prints the line; --json prints the final record', async () => {
    engine.delayMs = 300;
    const h = hashOf('db');
    const r = await sock('start-tunnel', h.slice(0, 6));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^db \\(${h.slice(0, 8)}\\): RUNNING, up \\d+s\\n$`));
    await engine.supervisor.stop(h);
    const j = await sock('start-tunnel', h, '--json');
    expect(j.code).toBe(0);
    const rec = JSON.parse(j.stdout) as StatusRecord;
    expect(rec).toMatchObject({ hash: h, status: 'RUNNING' });
    expect(j.stdout).toBe(`${JSON.stringify(engine.supervisor.status(h))}\n`);
  });

  it('a FAILED tunnel ends the wait with its reason and exit 1', async () => {
    const h = hashOf('web');
    engine.outcomes.set(h, { state: 'FAILED', error: 'authentication failed: Permission denied (publickey)' });
    const r = await sock('start-tunnel', h);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`tunnel-cli: web (${h.slice(0, 8)}) FAILED: authentication failed: Permission denied (publickey)\n`);
  });

  it('a RETRYING tunnel: the wait gives up after --timeout with exit 1', async () => {
    const h = hashOf('web');
    engine.outcomes.set(h, { state: 'RETRYING', error: 'connection refused' });
    const t0 = Date.now();
    const r = await sock('start-tunnel', h, '--timeout', '0.5');
    expect(r.code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.stderr).toMatch(/^tunnel-cli: gave up waiting after 0\.5 s: web \([0-9a-f]{8}\) is RETRYING \(connection refused\); the daemon keeps trying\n$/);
  });

  it('--no-wait returns at once with the record after the change', async () => {
    engine.delayMs = 5000;
    const h = hashOf('db');
    const r = await sock('start-tunnel', h, '--no-wait', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ hash: h, status: 'STARTING' });
    const human = await sock('stop-tunnel', h);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`db (${h.slice(0, 8)}): STOPPED\n`);
  });

  it('start waits for every started tunnel (not the interactive one), then prints the status', async () => {
    const r = await sock('start');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^db +\S+ +remote to local +RUNNING/m);
    expect(r.stdout).toMatch(/^web +\S+ +local to remote +RUNNING/m);
    expect(r.stdout).toMatch(/^unnamed +\S+ +remote to local +STOPPED/m);
    await engine.supervisor.stopAll();
    const j = await sock('start', '--json');
    expect(j.code).toBe(0);
    expect(j.stdout).toBe(`${await api('/status')}\n`);
  });

  it('start exits 1 when one of the tunnels FAILED', async () => {
    engine.outcomes.set(hashOf('web'), { state: 'FAILED', error: 'host key verification failed' });
    const r = await sock('start');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^db +\S+ +remote to local +RUNNING/m);
    expect(r.stderr).toMatch(/web \([0-9a-f]{8}\) FAILED: host key verification failed/);
  });

  it('stop and stop-tunnel; --json equal to the API body', async () => {
    await engine.supervisor.startAll();
    const r = await sock('stop');
    expect(r.code).toBe(0);
    expect(r.stdout.match(/STOPPED/g)).toHaveLength(3);
    const j = await sock('stop', '--json');
    expect(j.stdout).toBe(`${await api('/stop', 'POST')}\n`);
    const h = hashOf('web');
    const one = await sock('stop-tunnel', h, '--json');
    expect(one.stdout).toBe(`${await api(`/stop/${h}`, 'POST')}\n`);
  });

  it('reload: a summary, 1 with the problems when the file is invalid', async () => {
    const r = await sock('reload');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('reloaded: 0 added, 0 removed, 3 unchanged\n');
    engine.health = { ...engine.health, valid: false, error: 'line 2, column 5: tunnels: expected a list' };
    const bad = await sock('reload');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^tunnel-cli: nothing was applied, the last good config keeps running: .*line 2, column 5: tunnels: expected a list\n$/);
    const j = await sock('reload', '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout).error.code).toBe('config_invalid');
  });
});

describe('exit codes', () => {
  it('1 for an unknown tunnel, with the daemon\'s message', async () => {
    const r = await sock('stop-tunnel', 'ffff0000');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('tunnel-cli: no tunnel has a hash starting with ffff0000\n');
    expect(r.stdout).toBe('');
  });

  it('2 for usage errors, before any request', async () => {
    const cases: string[][] = [
      ['start-tunnel', 'xyz'],
      ['stop-tunnel', 'abc'],
      ['logs', 'xyz'],
      ['restart-tunnel'],
      ['hash', 'a'],
      ['bogus'],
      ['status', '--bogus'],
      ['status', '--no-wait'],
      ['start', '--timeout', 'soon'],
      ['status', '--url', 'http://127.0.0.1:1'],
      [],
    ];
    for (const args of cases) {
      const r = await sock(...args);
      expect(r.code, args.join(' ')).toBe(2);
      if (args.length > 0) expect(r.stderr, args.join(' ')).toMatch(/^tunnel-cli: .+\n$/);
    }
  });

  it('3 when the daemon is not reachable, naming the socket or URL', async () => {
    const gone = join(dir, 'nowhere', 'api.sock');
    const r = await cli(['--socket', gone, 'status']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`tunnel-cli: cannot reach the daemon at the socket ${gone}: no such socket; is the daemon running? Start it with \`tunnel-manager\`, or pass --socket PATH / --url URL\n`);
    const env = await cli(['start-tunnel', 'abcd'], { TUNNEL_SOCKET: gone });
    expect(env.code).toBe(3);
    const url = await cli(['--url', 'http://127.0.0.1:1', 'list']);
    expect(url.code).toBe(3);
    expect(url.stderr).toMatch(/^tunnel-cli: cannot reach the daemon at http:\/\/127\.0\.0\.1:1: connection refused;/);
  });

  it('--help for every command and --version exit 0', async () => {
    for (const c of ['list', 'status', 'start', 'stop', 'restart', 'start-tunnel', 'stop-tunnel', 'restart-tunnel', 'show-tunnel', 'logs', 'reload', 'validate', 'hash']) {
      const r = await cli([c, '--help']);
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toContain(`$ tunnel-cli ${c}`);
    }
    const v = await cli(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^tunnel-cli\/\d+\.\d+\.\d+/);
  });
});

describe('over HTTP with a token', () => {
  it('401 without the token is exit 1 and says how to pass it; --token and TUNNEL_API_TOKEN work', async () => {
    const none = await cli(['--url', base, 'status']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^tunnel-cli: .*Authorization: Bearer.*\(pass --token or set TUNNEL_API_TOKEN\)\n$/);
    const wrong = await cli(['--url', base, '--token', 'nope', 'status']);
    expect(wrong.code).toBe(1);
    const flag = await cli(['--url', base, '--token', TOKEN, 'status', '--json']);
    expect(flag.code).toBe(0);
    expect(flag.stdout).toBe(`${await api('/status')}\n`);
    const env = await cli(['list'], { TUNNEL_API_URL: base, TUNNEL_API_TOKEN: TOKEN });
    expect(env.code).toBe(0);
    expect(env.stdout).toContain('db');
    // start-tunnel waits over HTTP too (the event stream carries the token).
    const started = await cli(['--url', `${base}/`, '--token', TOKEN, 'start-tunnel', hashOf('db')]);
    expect(started.code).toBe(0);
    expect(started.stdout).toContain('RUNNING');
  });
});
