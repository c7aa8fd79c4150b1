// The built tunnel-cli driving the built daemon with a real sshd: every command,
// --json equal to the API, exit codes, token, socket mode, SSE, metrics, and a
// manual stop that sticks across a config reload and a daemon restart.
import { execFile, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, MAIN, port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';
import type { HealthBody, HealthDetails } from '../../../src/api/types.js';

const TOKEN = 'cli-e2e-token';
let server: Sshd;
let daemon: Daemon;
let dbPort: number;
let webPort: number;
let extraPort: number;

const configText = (extra = '') => `tunnels:
  - name: db
    remote_host: testhost
    remote_port: 22
    local_port: "127.0.0.1:${dbPort}"
    direction: remote_to_local
  - name: web
    remote_host: testhost
    remote_port: ${webPort}
    local_port: 3000
    direction: local_to_remote
${extra}`;

const extraTunnel = () => `  - name: extra
    remote_host: testhost
    remote_port: 22
    local_port: ${extraPort}
    direction: remote_to_local
`;

interface Run { code: number | null; stdout: string; stderr: string }
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (e, stdout, stderr) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr });
    });
  });
}
const sock = (...args: string[]) => cli(['--socket', daemon.socketPath, ...args]);

/** GET/POST over TCP with the token; the body as text. */
async function api(path: string, method = 'GET'): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${daemon.apiPort}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: r.status, text: await r.text() };
}

interface Rec { hash: string; name: string; status: string; pid: number | null; last_error: string | null }
async function statuses(): Promise<Rec[]> {
  return JSON.parse((await api('/status')).text) as Rec[];
}
async function waitStates(want: Record<string, string>, timeoutMs = 20_000): Promise<Rec[]> {
  return daemon.waitFor(`states ${JSON.stringify(want)}`, async () => {
    const all = await statuses();
    return Object.entries(want).every(([n, s]) => all.find((t) => t.name === n)?.status === s) ? all : undefined;
  }, timeoutMs);
}
const hashOf = async (name: string) => (await statuses()).find((t) => t.name === name)!.hash;

async function launch(config: string, dir?: string): Promise<Daemon> {
  return startDaemon({ config, sshConfigPath: server.sshConfigPath, env: { TUNNEL_API_TOKEN: TOKEN }, apiPort: await port(), dir });
}

beforeAll(async () => {
  server = await sshd();
  [dbPort, webPort, extraPort] = [await port(), await port(), await port()];
  daemon = await launch(configText());
  await waitStates({ db: 'RUNNING', web: 'RUNNING' });
}, 60_000);

afterAll(async () => {
  await daemon?.cleanup();
  await server?.stop();
});

describe('tunnel-cli against the daemon', () => {
  it('the socket is mode 0600 and needs no token; TCP needs it', async () => {
    expect(statSync(daemon.socketPath).mode & 0o777).toBe(0o600);
    expect((await fetch(`http://127.0.0.1:${daemon.apiPort}/status`)).status).toBe(401);
    const r = await sock('status');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^db +[0-9a-f]{8} +remote to local +RUNNING +up \d+s +0 +- +ok$/m);
    expect(r.stdout).toMatch(/^web +[0-9a-f]{8} +local to remote +RUNNING +up \d+s +0 +- +ok$/m);
  });

  it('list and status: --json equals the API body', async () => {
    const list = await sock('list', '--json');
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(`${(await api('/list')).text}\n`);
    expect(JSON.parse(list.stdout)[0]).toMatchObject({ name: 'db', local_port: `127.0.0.1:${dbPort}`, remote_port: 22 });
    const status = await sock('status', '--json');
    expect(status.stdout).toBe(`${(await api('/status')).text}\n`);
    const human = await sock('list');
    expect(human.stdout).toMatch(new RegExp(`^db +[0-9a-f]{8} +remote to local +testhost +22 +127\\.0\\.0\\.1:${dbPort}$`, 'm'));
  });

  it('stop-tunnel sends a status event on /events; start-tunnel waits until RUNNING', async () => {
    const h = await hashOf('web');
    const events = await openEvents(daemon.socketPath);
    const stopped = events.waitFor((t) => t.includes(`"hash":"${h}"`) && /"status":"STOPPED"/.test(t));
    const stop = await sock('stop-tunnel', h.slice(0, 6));
    expect(stop.code).toBe(0);
    expect(stop.stdout).toBe(`web (${h.slice(0, 8)}): STOPPED\n`);
    const text = await stopped;
    expect(text).toMatch(new RegExp(`event: status\\ndata: \\{"hash":"${h}"[^\\n]*"status":"STOPPED"`));
    events.close();

    const start = await sock('start-tunnel', h.slice(0, 4));
    expect(start.code).toBe(0);
    expect(start.stdout).toMatch(new RegExp(`^web \\(${h.slice(0, 8)}\\): RUNNING, up \\d+s\\n$`));
    expect((await statuses()).find((t) => t.hash === h)?.status).toBe('RUNNING');
    const json = await sock('stop-tunnel', h, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ hash: h, status: 'STOPPED' });
    const again = await sock('start-tunnel', h, '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ hash: h, status: 'RUNNING' });
  });

  it('logs prints the ssh lines; --json equals the API body', async () => {
    const h = await hashOf('db');
    const r = await sock('logs', h);
    expect(r.code).toBe(0);
    const body = (await api(`/logs/${h}`)).text;
    const parsed = JSON.parse(body) as { status: string; tunnel_hash: string; log: string; lines: string[] };
    expect(parsed).toEqual({ status: 'success', tunnel_hash: h, log: parsed.lines.join('\n'), lines: expect.any(Array) as unknown });
    expect(r.stdout).toBe(parsed.lines.map((l) => `${l}\n`).join(''));
    expect(parsed.lines.length).toBeGreaterThan(0);
    expect((await sock('logs', h, '--json')).stdout).toBe(`${body}\n`);
  });

  it('stop and start (all): the tables, and the wait', async () => {
    const stop = await sock('stop');
    expect(stop.code).toBe(0);
    expect(stop.stdout.match(/STOPPED/g)).toHaveLength(2);
    const start = await sock('start');
    expect(start.code).toBe(0);
    expect(start.stdout.match(/RUNNING/g)).toHaveLength(2);
    await waitStates({ db: 'RUNNING', web: 'RUNNING' });
  });

  it('a tunnel that cannot authenticate ends start-tunnel with FAILED and exit 1', async () => {
    daemon.writeConfig(configText(`  - name: denied
    remote_host: badkey
    remote_port: 22
    local_port: ${extraPort}
    direction: remote_to_local
`));
    const recs = await daemon.waitFor('the denied tunnel', async () => (await statuses()).find((t) => t.name === 'denied'));
    await daemon.waitFor('denied settled', async () => (await statuses()).find((t) => t.name === 'denied' && t.status === 'FAILED'));
    const r = await sock('start-tunnel', recs.hash);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^tunnel-cli: denied \\(${recs.hash.slice(0, 8)}\\) FAILED: .*(auth|Permission denied)`, 'i'));
    daemon.writeConfig(configText());
    await daemon.waitFor('denied removed', async () => !(await statuses()).some((t) => t.name === 'denied'));
  });

  it('reload: a summary; an invalid file is exit 1 with line and column, and status shows it', async () => {
    const ok = await sock('reload');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('reloaded: 0 added, 0 removed, 2 unchanged\n');
    // One broken entry: left out and reported, the others keep running.
    daemon.writeConfig(`${configText()}  - name: broken\n    remote_host: testhost\n    remote_port: 99999\n    local_port: 1\n    direction: remote_to_local\n`);
    await daemon.waitFor('the broken entry noticed', async () => ((await (await fetch(`http://127.0.0.1:${daemon.apiPort}/health`)).json()) as HealthBody).config?.valid === false);
    const partial = await sock('reload');
    expect(partial.code).toBe(1);
    expect(partial.stdout).toMatch(/^reloaded: 0 added, 0 removed, 2 unchanged; 1 left out \(nothing running was stopped or changed\):\n {2}line \d+, column \d+: tunnels\[2\]\.remote_port/);
    const partialStatus = await sock('status');
    expect(partialStatus.stdout).toMatch(/^config file has problems: 1 entry left out, the valid ones run; nothing running was stopped or changed:\n {2}line \d+, column \d+/);
    // As the README says: status is a report (exit 0, as with a FAILED tunnel); validate, like reload, fails.
    expect(partialStatus.code).toBe(0);
    expect((await sock('validate')).code).toBe(1);
    // A file that is not YAML at all: nothing applied.
    daemon.writeConfig(`${configText()}  - name: [broken\n`);
    await daemon.waitFor('the invalid file noticed', async () => (JSON.parse((await api('/health/details')).text) as HealthDetails).config?.applied === 'none');
    const bad = await sock('reload');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^tunnel-cli: nothing was applied, the last good config keeps running: .*line \d+, column \d+/);
    const status = await sock('status');
    expect(status.stdout).toMatch(/^config file invalid, the last good config keeps running:\n {2}.*line \d+, column \d+/);
    expect(status.stdout).toMatch(/^db .*RUNNING/m);
    daemon.writeConfig(configText());
    await daemon.waitFor('the valid file back', async () => ((await (await fetch(`http://127.0.0.1:${daemon.apiPort}/health`)).json()) as HealthBody).config?.valid === true);
  });

  it('token over --url: refused without, accepted with --token or TUNNEL_API_TOKEN', async () => {
    const url = `http://127.0.0.1:${daemon.apiPort}`;
    const none = await cli(['--url', url, 'status']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/unauthorized|Authorization/i);
    const flag = await cli(['--url', url, '--token', TOKEN, 'list', '--json']);
    expect(flag.code).toBe(0);
    expect(flag.stdout).toBe(`${(await api('/list')).text}\n`);
    const env = await cli(['status'], { TUNNEL_API_URL: url, TUNNEL_API_TOKEN: TOKEN });
    expect(env.code).toBe(0);
  });

  it('/metrics: tunnel_up and state per tunnel', async () => {
    const text = (await api('/metrics')).text;
    const db = await hashOf('db');
    expect(text).toMatch(new RegExp(`^tunnel_up\\{hash="${db}",name="db"\\} 1$`, 'm'));
    expect(text).toMatch(new RegExp(`^tunnel_state\\{hash="${db}",name="db",state="RUNNING"\\} 1$`, 'm'));
    expect(text).toMatch(/^config_valid 1$/m);
    expect(text).toMatch(/^config_reloads_total\{result="ok"\} [1-9]\d*$/m);
  });

  it('a manual stop sticks across a config reload and a daemon restart, until started by hand', async () => {
    const db = await hashOf('db');
    expect((await sock('stop-tunnel', db)).code).toBe(0);
    // A reload that adds a tunnel leaves the stopped one stopped.
    daemon.writeConfig(configText(extraTunnel()));
    await waitStates({ extra: 'RUNNING', web: 'RUNNING', db: 'STOPPED' });
    expect((await sock('reload')).code).toBe(0);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await statuses()).find((t) => t.name === 'db')?.status).toBe('STOPPED');

    // A restart of the daemon too.
    const dir = daemon.dir;
    expect(await daemon.stop()).toBe(0);
    const down = await sock('status');
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/^tunnel-cli: cannot reach the daemon at the socket .*api\.sock: (no such socket|connection refused)/);
    daemon = await launch(configText(extraTunnel()), dir);
    await waitStates({ extra: 'RUNNING', web: 'RUNNING' });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await statuses()).find((t) => t.name === 'db')?.status).toBe('STOPPED');

    const start = await sock('start-tunnel', db);
    expect(start.code).toBe(0);
    await waitStates({ db: 'RUNNING' });
  });
});

describe('the daemon refuses a non-loopback address without a token', () => {
  it('exits non-zero with the message', async () => {
    const p = await port();
    const child = spawn(process.execPath, [MAIN, '--config', '/nonexistent/config.yaml', '--listen', `0.0.0.0:${p}`, '--socket', `/tmp/tm-refuse-${p}/api.sock`, '--state-dir', `/tmp/tm-refuse-${p}/state`], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).not.toBe(0);
    expect(err).toContain(`refusing to listen on 0.0.0.0:${p} without TUNNEL_API_TOKEN`);
  });
});

function openEvents(socketPath: string): Promise<{ waitFor(pred: (text: string) => boolean): Promise<string>; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: '/events' }, (res) => {
      let text = '';
      const waiters: Array<{ pred: (t: string) => boolean; done: (t: string) => void }> = [];
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        for (const w of [...waiters]) if (w.pred(text)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.done(text);
        }
      });
      res.once('data', () =>
        resolve({
          waitFor: (pred) => new Promise((done) => (pred(text) ? done(text) : waiters.push({ pred, done }))),
          close: () => req.destroy(),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
