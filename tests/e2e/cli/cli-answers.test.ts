// The built tunnel-cli and the daemon's answers it cannot take at face value:
// - a daemon still loading its config file (the real listeners' `loading` answer over an
//   in-memory engine): every command waits for the load, then prints the whole config;
//   one still loading after --timeout ends with exit 3 and one line;
// - answers that are not what the API's schemas describe (a stand-in daemon on a unix
//   socket, since a real one never sends them): every command says which answer and
//   where, in one line, and exits 1.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaemonApp } from '../../../src/api/app.js';
import { stillLoading } from '../../../src/api/loading.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { createTerminalRoute, type TerminalRoute } from '../../../src/api/terminal.js';
import { startListeners, type Listeners } from '../../../src/api/server.js';
import { ConfigStore } from '../../../src/config-edit/store.js';
import { FakeEngine, SAMPLE } from '../../unit/api/fake-engine.js';
import { CLI } from '../daemon-harness.js';

interface Run { code: number | null; stdout: string; stderr: string }

function cli(socketPath: string, args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, '--socket', socketPath, ...args], { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (e, stdout, stderr) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tm-cli-answers-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a daemon still loading its config file', () => {
  let engine: FakeEngine;
  let listeners: Listeners;
  let terminals: TerminalRoute;
  let socketPath: string;
  const loaded = '2024-01-01T00:00:00.000Z';

  beforeAll(async () => {
    engine = new FakeEngine(SAMPLE);
    socketPath = join(dir, 'loading.sock');
    const configPath = join(dir, 'config.yaml');
    writeFileSync(configPath, stringify({ tunnels: SAMPLE }));
    const configFile = new ConfigStore({ path: configPath, writer: 'api', mode: 'default', backupDir: join(dir, 'backups'), keepBackups: 3, log: () => undefined });
    const metrics = createMetrics(engine, { processMetrics: false });
    terminals = createTerminalRoute({ engine, tokens: null, log: () => undefined });
    listeners = await startListeners({
      tcpApp: createDaemonApp({ engine, configFile, transport: 'tcp', tokens: null, metrics }),
      socketApp: createDaemonApp({ engine, configFile, transport: 'socket', tokens: null, metrics }),
      listen: { host: '127.0.0.1', port: 0 },
      socketPath,
      tokens: null,
      loading: () => stillLoading(engine),
      upgrade: { tcp: terminals.upgrade, socket: terminals.upgrade },
    });
  });
  afterAll(async () => {
    terminals?.close();
    await listeners?.close();
    engine?.close();
  });

  it('every command waits for the load and then answers from the whole config', async () => {
    engine.health = { ...engine.health, loaded_at: null };
    const db = engine.tunnels().find((t) => t.name === 'db')!.hash;
    const web = engine.tunnels().find((t) => t.name === 'web')!.hash;
    const runs = Promise.all([
      cli(socketPath, ['list']),
      cli(socketPath, ['status']),
      cli(socketPath, ['validate']),
      cli(socketPath, ['logs']),
      cli(socketPath, ['show-tunnel', db]),
      cli(socketPath, ['start-tunnel', db]),
      cli(socketPath, ['start-tunnel', web, '--no-wait']),
      cli(socketPath, ['reload']),
      // The login terminal too: it waits, then gets the daemon's real answer (this engine has no terminals).
      cli(socketPath, ['auth', db]),
    ]);
    // Long enough for every command to have asked and been told `loading`.
    await new Promise((r) => setTimeout(r, 1_500));
    engine.health = { ...engine.health, loaded_at: loaded };
    const [list, status, validate, logs, show, start, noWait, reload, auth] = await runs;
    expect(auth.stderr).toBe('tunnel-cli: the fake engine has no terminals\n');
    expect(auth.code).toBe(1);
    for (const r of [list, status, validate, logs, show, start, noWait, reload]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(list.stdout).toMatch(/^db +/m);
    expect(list.stdout).toMatch(/^web +/m);
    expect(status.stdout).toMatch(/^db +[0-9a-f]{8} /m);
    expect(validate.stdout).toBe('the config file is valid\n');
    expect(show.stdout).toMatch(/^name +db$/m);
    expect(start.stdout).toMatch(/^db \([0-9a-f]{8}\): RUNNING/);
    expect(noWait.stdout).toMatch(/^web \([0-9a-f]{8}\): /);
    expect(reload.stdout).toMatch(/^reloaded/);
  });

  it('a daemon still loading after --timeout: exit 3 and one line saying so', async () => {
    engine.health = { ...engine.health, loaded_at: null };
    try {
      const r = await cli(socketPath, ['start', '--timeout', '1']);
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(`tunnel-cli: the daemon at the socket ${socketPath} is still loading its config file after 1 s; try again later (or pass a longer --timeout)\n`);
      expect(r.stdout).toBe('');
    } finally {
      engine.health = { ...engine.health, loaded_at: loaded };
    }
  });
});

describe('answers that are not what the API describes', () => {
  const HASH = 'abcd1234abcd1234abcd1234abcd1234';
  const record = { hash: HASH, name: 'db', remote_host: 'h', remote_port: '1', local_port: '2', direction: 'remote_to_local', status: 'STARTING', pid: 7, since: '2024-01-01T00:00:00.000Z', restarts: 0, last_exit: null, last_error: null, next_retry_at: null, health: { state: 'unknown', reason: null, since: '2024-01-01T00:00:00.000Z' }, connection: null };
  // Each path with an answer a daemon of another shape might give.
  const answers: Record<string, { status: number; body: string }> = {
    'GET /list': { status: 200, body: JSON.stringify([{ name: 'db' }]) },
    'GET /status': { status: 200, body: JSON.stringify({ tunnels: [] }) },
    'GET /health/details': { status: 200, body: JSON.stringify({ ok: true }) },
    'GET /logs': { status: 200, body: JSON.stringify([{ hash: 1 }]) },
    [`GET /logs/${HASH}`]: { status: 200, body: 'plain text, not JSON' },
    [`GET /config/${HASH}`]: { status: 200, body: JSON.stringify({ ...record, interactive: 'no' }) },
    'POST /reload': { status: 200, body: JSON.stringify({ type: 'reload', ok: true }) },
    'POST /stop': { status: 200, body: JSON.stringify([{ ...record, status: 'GONE' }]) },
    [`POST /stop/${HASH}`]: { status: 200, body: JSON.stringify({ ...record, pid: 'seven' }) },
    [`POST /start/${HASH}`]: { status: 200, body: JSON.stringify(record) },
    'POST /start': { status: 500, body: '<html>proxy error</html>' },
  };
  let server: http.Server;
  let socketPath: string;

  beforeAll(async () => {
    socketPath = join(dir, 'odd.sock');
    server = http.createServer((req, res) => {
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': connected\n\n');
        // After the start's answer: a status event of the wrong shape.
        setTimeout(() => res.write(`event: status\ndata: ${JSON.stringify({ hash: HASH, status: 'RUNNING' })}\n\n`), 200);
        return;
      }
      const a = answers[`${req.method} ${req.url}`] ?? { status: 404, body: JSON.stringify({ error: { code: 'not_found', message: `no route ${req.url}` } }) };
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(a.body);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it.each([
    [['list'], /^tunnel-cli: the daemon's answer to GET \/list is not what this tunnel-cli expects \(0\.hash: .+\); is the daemon another version\?\n$/],
    [['status'], /^tunnel-cli: the daemon's answer to GET \/status is not what this tunnel-cli expects \(the body: .+\); is the daemon another version\?\n$/],
    [['validate'], /^tunnel-cli: the daemon's answer to GET \/health\/details is not what this tunnel-cli expects \(loading: .+\); is the daemon another version\?\n$/],
    [['logs'], /^tunnel-cli: the daemon's answer to GET \/logs is not what this tunnel-cli expects \(0\.hash: .+\)/],
    [['logs', HASH], /^tunnel-cli: the daemon's answer to GET \/logs\/abcd1234abcd1234abcd1234abcd1234 is not JSON: "plain text, not JSON"\n$/],
    [['show-tunnel', HASH], /^tunnel-cli: the daemon's answer to GET \/config\/abcd1234abcd1234abcd1234abcd1234 is not what this tunnel-cli expects \(interactive: .+\)/],
    [['reload'], /^tunnel-cli: the daemon's answer to POST \/reload is not what this tunnel-cli expects \(at: .+\)/],
    [['stop'], /^tunnel-cli: the daemon's answer to POST \/stop is not what this tunnel-cli expects \(0\.status: .+\)/],
    [['stop-tunnel', HASH], /^tunnel-cli: the daemon's answer to POST \/stop\/abcd1234abcd1234abcd1234abcd1234 is not what this tunnel-cli expects \(pid: .+\)/],
    [['start', '--no-wait'], /^tunnel-cli: the daemon answered 500: "<html>proxy error<\/html>"\n$/],
    [['start-tunnel', HASH], /^tunnel-cli: a status event from the daemon is not what this tunnel-cli expects: .+\n$/],
  ])('%j: one line naming the answer, exit 1', async (args, message) => {
    const r = await cli(socketPath, args as string[]);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(1);
  });
});
