import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { afterEach, describe, expect, it } from 'vitest';
import { createPanelApp } from '../../../src/panel/app.js';
import { loadAssets } from '../../../src/panel/assets.js';
import { Sessions } from '../../../src/panel/auth.js';
import { ConfigStore } from '../../../src/config-edit/store.js';
import { createDaemonClient } from '../../../src/panel/daemon-client.js';
import { EventsHub } from '../../../src/panel/events-hub.js';
import { startPanel } from '../../../src/panel/index.js';
import { parseConfigText } from '../../../src/config/load.js';
import { FIXTURES } from '../config/anchor-fixtures.js';

const CONFIG = `# my tunnels
tunnels:
  # the database
  - name: db          # keep me
    remote_host: "user@bastion"
    remote_port: 5432
    local_port: '127.0.0.1:15432'
    direction: remote_to_local
    owner: ops        # unknown key
`;

const API_TOKEN = 'daemon-secret-token-123';
const PANEL_PASSWORD = 'panel-password-456';
const ORIGIN = 'http://127.0.0.1:5000';
const HOST = '127.0.0.1:5000';

/** A panel answer whose JSON body each test reads field by field; its assertions are the check. */
type PanelResponse = Omit<Response, 'json'> & { json(): Promise<any> };

/** A stand-in for the daemon's API: records calls, checks the bearer token. */
function fakeDaemon() {
  const calls: string[] = [];
  const auth: (string | undefined)[] = [];
  const app = new Hono();
  const rec = (hash: string, status: string) => ({
    hash, name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local',
    status, pid: status === 'RUNNING' ? 42 : null, since: new Date().toISOString(), restarts: 0, last_exit: null, last_error: null, next_retry_at: null,
  });
  app.use('*', async (c, next) => {
    calls.push(`${c.req.method} ${c.req.path}`);
    auth.push(c.req.header('authorization'));
    if (c.req.header('authorization') !== `Bearer ${API_TOKEN}`) return c.json({ error: { code: 'unauthorized', message: 'token' } }, 401);
    await next();
  });
  app.get('/status', (c) => c.json([rec('a'.repeat(32), 'RUNNING')]));
  app.get('/health/details', (c) => c.json({ ok: true, config: { valid: true, error: null, missing: false } }));
  app.post('/stop/:hash', (c) => c.json(rec(c.req.param('hash'), 'STOPPED')));
  app.post('/start', (c) => c.json([rec('a'.repeat(32), 'STARTING')]));
  app.get('/logs/:hash', (c) => (c.req.param('hash') === 'b'.repeat(32) ? c.json({ error: { code: 'not_found', message: 'no tunnel' } }, 404) : c.json(['debug1: Local forwarding listening on 127.0.0.1 port 15432.'])));
  app.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      await stream.write(': connected\n\n');
      await stream.writeSSE({ event: 'status', data: JSON.stringify(rec('a'.repeat(32), 'RETRYING')) });
      await stream.sleep(60_000);
    }),
  );
  const fetchImpl = ((input: string | URL | Request, init?: RequestInit) => app.request(String(input), init)) as typeof fetch;
  return { calls, auth, fetchImpl };
}

async function setup(opts: { password?: string | null; config?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tm-panel-app-'));
  const configPath = join(dir, 'config', 'config.yaml');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(dir, 'config'));
  writeFileSync(configPath, opts.config ?? CONFIG);
  const daemon = fakeDaemon();
  const client = createDaemonClient('http://127.0.0.1:8080', API_TOKEN, { fetchImpl: daemon.fetchImpl });
  const hub = new EventsHub(client);
  const shutdown = new AbortController();
  const logs: Record<string, unknown>[] = [];
  const app = createPanelApp({
    password: opts.password ?? null,
    sessions: new Sessions(),
    store: new ConfigStore({ path: configPath, writer: 'panel', mode: 'default', backupDir: join(dir, 'backups'), keepBackups: 3, log: (e) => logs.push(e) }),
    mode: 'default',
    sshHosts: async () => ['bastion', 'db1'],
    daemon: client,
    hub,
    shutdown: shutdown.signal,
    assets: await loadAssets(),
    log: (e) => logs.push(e),
  });
  const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    Promise.resolve(app.request(`http://${HOST}${path}`, {
      method,
      headers: { host: HOST, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })) as Promise<PanelResponse>;
  const own = { origin: ORIGIN };
  const cleanups = [async () => { shutdown.abort(); await hub.close(); }];
  return { dir, configPath, daemon, req, own, logs, cleanups, hub };
}

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const fields = (over: Record<string, string> = {}) => ({
  name: 'web', remote_host: 'bastion', remote_port: '80', local_port: '18080', direction: 'remote_to_local', ...over,
});

describe('the page and its headers', () => {
  it('serves the page with a strict CSP and no secret in it', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const res = await s.req('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).toContain('<script type="module" src="/app.js">');
    for (const asset of ['/app.js', '/api.js', '/dom.js', '/editor.js', '/list.js', '/state.js', '/style.css', '/icon.svg']) expect((await s.req('GET', asset)).status).toBe(200);
  });

  it('answers only to loopback host names without a password (DNS rebinding)', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const res = await s.req('GET', '/api/config', undefined, { host: 'evil.example:5000' });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('host_not_allowed');
  });
});

describe('config and editing', () => {
  it('shows every tunnel with its words, hash and the file version', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const body = await (await s.req('GET', '/api/config')).json();
    expect(body.mode).toBe('default');
    expect(body.config.valid).toBe(true);
    expect(body.config.version).toMatch(/^[0-9a-f]{64}$/);
    expect(body.config.entries).toHaveLength(1);
    expect(body.config.entries[0].description).toBe('bring bastion:5432 to local 127.0.0.1:15432');
    expect(body.config.entries[0].other_keys).toEqual(['owner']);
    expect(body.directions.map((d: { value: string }) => d.value)).toEqual(['remote_to_local', 'local_to_remote', 'socks']);
    expect((await (await s.req('GET', '/api/ssh-hosts')).json()).hosts).toEqual(['bastion', 'db1']);
  });

  it('adds a tunnel: the file has it, comments and unknown keys kept, a backup made', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const { config } = await (await s.req('GET', '/api/config')).json();
    const res = await s.req('POST', '/api/tunnels', { version: config.version, fields: fields() }, s.own);
    expect(res.status).toBe(200);
    const out = await res.json();
    expect(out.config.entries.map((e: { fields: { name: string } }) => e.fields.name)).toEqual(['db', 'web']);
    const text = readFileSync(s.configPath, 'utf8');
    for (const c of ['# my tunnels', '# the database', '# keep me', '# unknown key', 'owner: ops', 'remote_host: "user@bastion"']) expect(text).toContain(c);
    expect(text).toMatch(/- name: web\n\s+remote_host: "?bastion"?\n\s+remote_port: 80\n/);
    const backups = readdirSync(join(s.dir, 'backups'));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(s.dir, 'backups', backups[0] as string), 'utf8')).toBe(CONFIG);
    expect(readdirSync(join(s.dir, 'config'))).toEqual(['config.yaml']);
  });

  it('a file with a broken entry is partly applied: the view names the entry left out', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    writeFileSync(s.configPath, `${CONFIG}  - name: broken\n    remote_host: bastion\n    remote_port: 99999\n    local_port: 1\n`);
    const { config } = await (await s.req('GET', '/api/config')).json();
    expect(config).toMatchObject({ valid: false, applied: 'partial', rejected: [1] });
    expect(config.problems.map((p: { field: string }) => p.field)).toEqual(['tunnels[1].remote_port']);
    writeFileSync(s.configPath, 'tunnels: [\n');
    expect((await (await s.req('GET', '/api/config')).json()).config).toMatchObject({ valid: false, applied: 'none', rejected: [] });
  });

  it('an invalid port is an error next to the field, and the file is unchanged', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const { config } = await (await s.req('GET', '/api/config')).json();
    const res = await s.req('POST', '/api/tunnels', { version: config.version, fields: fields({ local_port: '99999' }) }, s.own);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe('invalid');
    expect(body.fields.local_port).toMatch(/99999/);
    expect(Object.keys(body.fields)).toEqual(['local_port']);
    expect(readFileSync(s.configPath, 'utf8')).toBe(CONFIG);
  });

  it('a second tunnel on the same local port is refused', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const { config } = await (await s.req('GET', '/api/config')).json();
    const res = await s.req('POST', '/api/tunnels', { version: config.version, fields: fields({ local_port: '127.0.0.1:15432' }) }, s.own);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(JSON.stringify(body)).toMatch(/15432/);
    expect(readFileSync(s.configPath, 'utf8')).toBe(CONFIG);
  });

  it('a file changed on disk since it was loaded is a conflict with both sides, and nothing is written', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const { config } = await (await s.req('GET', '/api/config')).json();
    const theirs = CONFIG.replace('remote_port: 5432', 'remote_port: 6543');
    writeFileSync(s.configPath, theirs);
    const hash = config.entries[0].hash;
    const res = await s.req('PUT', '/api/tunnels/0', { version: config.version, hash, fields: fields({ name: 'db', remote_host: 'user@bastion', remote_port: '7777', local_port: '127.0.0.1:15432' }) }, s.own);
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body.error.code).toBe('conflict');
    expect(body.theirs.fields.remote_port).toBe('6543');
    expect(body.theirs_unchanged).toBe(false);
    expect(body.current.version).not.toBe(config.version);
    expect(readFileSync(s.configPath, 'utf8')).toBe(theirs);
    // Saving again on top of the current version goes through.
    const again = await s.req('PUT', '/api/tunnels/0', { version: body.current.version, hash: body.theirs.hash, fields: fields({ name: 'db', remote_host: 'user@bastion', remote_port: '7777', local_port: '127.0.0.1:15432' }) }, s.own);
    expect(again.status).toBe(200);
    expect(readFileSync(s.configPath, 'utf8')).toContain('remote_port: 7777');
  });

  it('deletes a tunnel and keeps the bounded number of backups', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    let version = (await (await s.req('GET', '/api/config')).json()).config.version;
    for (let i = 0; i < 5; i++) {
      const r = await (await s.req('POST', '/api/tunnels', { version, fields: fields({ name: `t${i}`, local_port: String(18000 + i) }) }, s.own)).json();
      version = r.config.version;
    }
    const del = await s.req('DELETE', '/api/tunnels/0', { version, hash: null }, s.own);
    expect(del.status).toBe(200);
    const names = (await del.json()).config.entries.map((e: { fields: { name: string } }) => e.fields.name);
    expect(names).toEqual(['t0', 't1', 't2', 't3', 't4']);
    expect(readdirSync(join(s.dir, 'backups'))).toHaveLength(3);
    expect(readFileSync(s.configPath, 'utf8')).toContain('# my tunnels');
  });

  it('refuses bodies of the wrong shape', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const res = await s.req('POST', '/api/tunnels', { version: 'x', fields: { name: 1 } }, s.own);
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_body');
    expect((await s.req('PUT', '/api/tunnels/abc', { version: 'x', fields: fields() }, s.own)).status).toBe(400);
  });
});

describe('the form over anchors, aliases and merge keys', () => {
  type View = { version: string; entries: { hash: string; fields: Record<string, string> }[] };
  const load = async (s: Awaited<ReturnType<typeof setup>>): Promise<View> => (await (await s.req('GET', '/api/config')).json()).config;
  const hosts = (text: string) => {
    const r = parseConfigText(text);
    expect(r.kind).toBe('ok');
    return r.kind === 'ok' ? Object.fromEntries(r.config.tunnels.map((t) => [t.name, t.remote_host])) : {};
  };

  it('deleting the entry that holds the anchor keeps the file readable and the others as they were', async () => {
    const s = await setup({ config: FIXTURES['a scalar anchored in one entry, aliased by two'] });
    cleanups.push(...s.cleanups);
    const c = await load(s);
    const res = await s.req('DELETE', '/api/tunnels/0', { version: c.version, hash: c.entries[0]!.hash }, s.own);
    expect(res.status).toBe(200);
    const text = readFileSync(s.configPath, 'utf8');
    expect(hosts(text)).toEqual({ cache: 'user@bastion', web: 'user@bastion' });
    expect(text).toMatch(/name: cache\n\s+remote_host: &jump user@bastion/);
  });

  it('editing an anchored value changes that tunnel only; saving an aliased one unchanged keeps the alias', async () => {
    const s = await setup({ config: FIXTURES['a scalar anchored in one entry, aliased by two'] });
    cleanups.push(...s.cleanups);
    let c = await load(s);
    const same = await s.req('PUT', '/api/tunnels/2', { version: c.version, hash: c.entries[2]!.hash, fields: c.entries[2]!.fields }, s.own);
    expect(same.status).toBe(200);
    expect(readFileSync(s.configPath, 'utf8')).toBe(FIXTURES['a scalar anchored in one entry, aliased by two']);
    c = await load(s);
    const res = await s.req('PUT', '/api/tunnels/0', { version: c.version, hash: c.entries[0]!.hash, fields: { ...c.entries[0]!.fields, remote_host: 'user@other' } }, s.own);
    expect(res.status).toBe(200);
    const text = readFileSync(s.configPath, 'utf8');
    expect(hosts(text)).toEqual({ db: 'user@other', cache: 'user@bastion', web: 'user@bastion' });
    expect(text).toContain('remote_host: *jump');
  });

  it('a field a merge key brings: the form shows it, and editing it overrides it on that entry only', async () => {
    const s = await setup({ config: FIXTURES['a defaults map merged into every entry'] });
    cleanups.push(...s.cleanups);
    const c = await load(s);
    expect(c.entries.map((e) => e.fields.remote_host)).toEqual(['user@bastion', 'user@bastion']);
    const res = await s.req('PUT', '/api/tunnels/1', { version: c.version, hash: c.entries[1]!.hash, fields: { ...c.entries[1]!.fields, remote_host: 'user@web-host' } }, s.own);
    expect(res.status).toBe(200);
    const text = readFileSync(s.configPath, 'utf8');
    expect(hosts(text)).toEqual({ db: 'user@bastion', web: 'user@web-host' });
    expect(text.match(/<<: \*defaults/g)).toHaveLength(2);
  });
});

describe('cross-site requests', () => {
  it('a state-changing request from a foreign origin gets 403 and changes nothing', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const { config } = await (await s.req('GET', '/api/config')).json();
    for (const [method, path] of [['POST', '/api/tunnels'], ['PUT', '/api/tunnels/0'], ['DELETE', '/api/tunnels/0'], ['POST', '/api/daemon/stop'], ['POST', '/api/login']]) {
      const res = await s.req(method as string, path as string, { version: config.version, fields: fields(), hash: null }, { origin: 'https://evil.example' });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await res.json()).error.code).toBe('foreign_origin');
    }
    const bare = await s.req('POST', '/api/tunnels', { version: config.version, fields: fields() });
    expect(bare.status).toBe(403);
    const withHeader = await s.req('POST', '/api/tunnels', { version: config.version, fields: fields() }, { 'x-panel-request': '1' });
    expect(withHeader.status).toBe(200);
    expect(s.daemon.calls.filter((c) => c.startsWith('POST'))).toEqual([]);
  });
});

describe('password', () => {
  it('needs a login; the cookie is HttpOnly and SameSite=Strict; logout ends the session', async () => {
    const s = await setup({ password: PANEL_PASSWORD });
    cleanups.push(...s.cleanups);
    expect(await (await s.req('GET', '/api/session')).json()).toEqual({ password_required: true, authenticated: false });
    expect((await s.req('GET', '/api/config')).status).toBe(401);
    expect((await s.req('GET', '/api/events')).status).toBe(401);
    expect((await s.req('POST', '/api/daemon/stop', undefined, s.own)).status).toBe(401);
    expect((await s.req('GET', '/')).status).toBe(200);

    const wrong = await s.req('POST', '/api/login', { password: 'nope' }, s.own);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();

    const right = await s.req('POST', '/api/login', { password: PANEL_PASSWORD }, s.own);
    expect(right.status).toBe(200);
    const cookie = right.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^tm_panel_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(PANEL_PASSWORD);
    const session = cookie.split(';')[0] as string;
    expect((await s.req('GET', '/api/config', undefined, { cookie: session })).status).toBe(200);
    // Any Host is fine with a password: the cookie is what protects.
    expect((await s.req('GET', '/api/config', undefined, { cookie: session, host: 'panel.example.org' })).status).toBe(200);

    await s.req('POST', '/api/logout', undefined, { ...s.own, cookie: session });
    expect((await s.req('GET', '/api/config', undefined, { cookie: session })).status).toBe(401);
  });

  it('limits wrong guesses', async () => {
    const s = await setup({ password: PANEL_PASSWORD });
    cleanups.push(...s.cleanups);
    let last = 0;
    for (let i = 0; i < 21; i++) last = (await s.req('POST', '/api/login', { password: `guess${i}` }, s.own)).status;
    expect(last).toBe(429);
  });
});

describe('the daemon through the panel', () => {
  it('start and stop go to the daemon with its token, which never comes back', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const hash = 'a'.repeat(32);
    const stop = await s.req('POST', `/api/daemon/stop/${hash}`, undefined, s.own);
    expect(stop.status).toBe(200);
    const text = await stop.text();
    expect(JSON.parse(text).status).toBe('STOPPED');
    expect(text).not.toContain(API_TOKEN);
    expect((await s.req('POST', '/api/daemon/start', undefined, s.own)).status).toBe(200);
    expect(s.daemon.calls).toEqual([`POST /stop/${hash}`, 'POST /start']);
    expect(s.daemon.auth.every((a) => a === `Bearer ${API_TOKEN}`)).toBe(true);
    expect((await s.req('POST', '/api/daemon/stop/..%2fhealth', undefined, s.own)).status).toBe(400);
  });

  it('logs come through; daemon errors keep their status and message', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const ok = await (await s.req('GET', `/api/daemon/logs/${'a'.repeat(32)}`)).json();
    expect(ok.lines[0]).toMatch(/forwarding listening/);
    const missing = await s.req('GET', `/api/daemon/logs/${'b'.repeat(32)}`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.message).toBe('no tunnel');
  });

  it('a daemon that refuses the panel\'s token is a 502, not a login prompt', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const client = createDaemonClient('http://127.0.0.1:8080', 'wrong', { fetchImpl: s.daemon.fetchImpl });
    const r = await client.post('/start');
    expect(!r.ok && r.error).toMatchObject({ reason: 'connection', code: 'daemon_token_rejected' });
    expect(!r.ok && r.error.message).toMatch(/TUNNEL_API_TOKEN/);
  });

  it('an unreachable daemon is a clear 502', async () => {
    const { createServer } = await import('node:net');
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const closed = (srv.address() as { port: number }).port;
    await new Promise((r) => srv.close(r));
    const client = createDaemonClient(`http://user:pw@127.0.0.1:${closed}/`, null);
    const r = await client.get('/status');
    expect(!r.ok && r.error).toMatchObject({ reason: 'connection', code: 'daemon_refused' });
    expect(!r.ok && r.error.message).toContain(`http://127.0.0.1:${closed}`);
    expect(!r.ok && r.error.message).toMatch(/nothing listens .*start the daemon/);
    expect(!r.ok && r.error.message).not.toContain('pw');
  });

  it('live events: one snapshot, then status changes, from one shared upstream connection', async () => {
    const s = await setup();
    cleanups.push(...s.cleanups);
    const read = async () => {
      const res = await s.req('GET', '/api/events');
      if (!res.headers.get('content-type')?.includes('event-stream')) throw new Error(`${res.status} ${await res.text()}`);
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      const reader = res.body!.getReader();
      let text = '';
      const deadline = Date.now() + 5000;
      while (!/event: status/.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      await reader.cancel();
      return text;
    };
    const [a, b] = await Promise.all([read(), read()]);
    for (const text of [a, b]) {
      expect(text).toMatch(/event: snapshot/);
      expect(text).toMatch(/"status":"RETRYING"/);
      expect(text).not.toContain(API_TOKEN);
    }
    expect(s.daemon.calls.filter((c) => c === 'GET /events')).toHaveLength(1);
  });
});

describe('starting the panel', () => {
  it('refuses a non-loopback address without PANEL_TOKEN', async () => {
    const common = { configPath: '/tmp/x.yaml', defaultConfigPath: '/tmp/config/config.yaml', apiUrl: 'http://127.0.0.1:8080', apiToken: null, sshConfigPath: null, mode: 'default' as const };
    await expect(startPanel({ ...common, listen: { host: '0.0.0.0', port: 0 }, panelToken: null })).rejects.toThrow(/without PANEL_TOKEN/);
    await expect(startPanel({ ...common, listen: { host: '0.0.0.0', port: 0 }, panelToken: '' })).rejects.toThrow(/without PANEL_TOKEN/);
    const p = await startPanel({ ...common, listen: { host: '127.0.0.1', port: 0 }, panelToken: null });
    expect(p.port).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${p.port}/`);
    expect(res.status).toBe(200);
    await p.close();
    await p.close();
  });
});
