import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventStreamSlots } from '../../../src/api/events.js';
import { HEALTH_ERROR } from '../../../src/api/health.js';
import type { SseItem } from '../../../src/api/sse-reader.js';
import type { ApiErrorBody } from '../../../src/api/types.js';
import type { StatusRecord } from '../../../src/tunnel/status.js';
import { FakeEngine, SAMPLE, spec } from './fake-engine.js';
import { build, readSse } from './helpers.js';

const engines: FakeEngine[] = [];
function setup(opts: Parameters<typeof build>[0] = {}) {
  const b = build(opts);
  engines.push(b.engine);
  return b;
}
afterEach(() => {
  for (const e of engines.splice(0)) e.close();
});

const json = async (r: Response) => (await r.json()) as unknown;
const post = { method: 'POST' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function expectError(r: Response, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await r.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(5);
  expect(Object.keys(body)).toEqual(['error']);
  return body;
}

describe('GET /list', () => {
  it('returns every entry as written, with hash and the effective name', async () => {
    const { app, engine } = setup();
    const r = await app.request('/list');
    expect(r.status).toBe(200);
    const body = (await r.json()) as Record<string, unknown>[];
    expect(body).toHaveLength(3);
    const [db, web, unnamed] = engine.tunnels();
    expect(body[0]).toEqual({ name: 'db', remote_host: 'user@bastion', remote_port: 5432, local_port: '127.0.0.1:15432', direction: 'remote_to_local', hash: db!.hash, status: 'STOPPED' });
    // ip:port strings round-trip exactly; unknown keys are kept.
    expect(body[1]).toMatchObject({ remote_port: '0.0.0.0:8081', local_port: 3000, comment_key: 'kept', hash: web!.hash });
    expect(body[2]).toMatchObject({ name: 'unnamed', interactive: true, hash: unnamed!.hash });
  });
});

describe('GET /status', () => {
  it('returns a status record for every configured tunnel', async () => {
    const { app } = setup();
    const body = (await json(await app.request('/status'))) as StatusRecord[];
    expect(body.map((s) => s.status)).toEqual(['STOPPED', 'STOPPED', 'STOPPED']);
    expect(Object.keys(body[0]!).sort()).toEqual(
      ['hash', 'name', 'remote_host', 'remote_port', 'local_port', 'direction', 'status', 'pid', 'since', 'restarts', 'last_exit', 'last_error', 'next_retry_at', 'health', 'connection'].sort(),
    );
  });

  it('builds the body once and serves it until a state change or a reload', async () => {
    const { app, engine } = setup();
    const built = vi.spyOn(engine.supervisor, 'statuses');
    const first = await (await app.request('/status')).text();
    for (let i = 0; i < 5; i++) {
      const r = await app.request('/status');
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(await r.text()).toBe(first);
    }
    expect(built).toHaveBeenCalledTimes(1);

    // A state change (a status event) shows at once.
    const [db, web] = engine.tunnels();
    await app.request(`/start/${db!.hash}`, post);
    const started = (await json(await app.request('/status'))) as StatusRecord[];
    expect(started.map((s) => s.status)).toEqual(['STARTING', 'STOPPED', 'STOPPED']);
    expect(started).toEqual(engine.supervisor.statuses());

    // A reload that removes a tunnel (no status event for it) shows at once too.
    engine.setTunnels(SAMPLE.slice(1));
    await app.request('/reload', post);
    const reloaded = (await json(await app.request('/status'))) as StatusRecord[];
    expect(reloaded.map((s) => s.hash)).toEqual([web!.hash, engine.tunnels()[1]!.hash]);
  });
});

describe('POST /start and /stop', () => {
  it('start all returns the records after the change, stop all stops them', async () => {
    const { app } = setup();
    const started = (await json(await app.request('/start', post))) as StatusRecord[];
    expect(started.map((s) => s.status)).toEqual(['STARTING', 'STARTING', 'STOPPED']);
    const stopped = (await json(await app.request('/stop', post))) as StatusRecord[];
    expect(stopped.map((s) => s.status)).toEqual(['STOPPED', 'STOPPED', 'STOPPED']);
  });

  it('start all answers 503 while the file is invalid and nothing is loaded', async () => {
    const { app, engine } = setup({ entries: [] });
    engine.health = { ...engine.health, valid: false, error: 'line 3, column 5: tunnels[0].local_port: expected a port, found "x"' };
    const body = await expectError(await app.request('/start', post), 503, 'config_invalid');
    expect(body.error.message).toContain('line 3, column 5');
  });

  it('start all keeps working on the last good config while the file is invalid', async () => {
    const { app, engine } = setup();
    engine.health = { ...engine.health, valid: false, error: 'line 1: bad' };
    expect((await app.request('/start', post)).status).toBe(200);
  });

  it('stop all needs no config', async () => {
    const { app, engine } = setup({ entries: [] });
    engine.health = { ...engine.health, valid: false, error: 'bad' };
    expect(await json(await app.request('/stop', post))).toEqual([]);
  });
});

describe('POST /start/:hash and /stop/:hash', () => {
  it('accepts the full hash and any unique prefix of at least 4 characters, in either case', async () => {
    const { app, engine } = setup();
    const hash = engine.tunnels()[0]!.hash;
    const r = await app.request(`/start/${hash.slice(0, 6).toUpperCase()}`, post);
    expect(r.status).toBe(200);
    const rec = (await r.json()) as StatusRecord;
    expect(rec).toMatchObject({ hash, name: 'db', status: 'STARTING' });
    await sleep(60);
    expect(engine.supervisor.status(hash)!.status).toBe('RUNNING');
    const stopped = (await json(await app.request(`/stop/${hash}`, post))) as StatusRecord;
    expect(stopped).toMatchObject({ hash, status: 'STOPPED' });
  });

  it('400 for a malformed or short hash, 404 for an unknown one', async () => {
    const { app } = setup();
    await expectError(await app.request('/start/abc', post), 400, 'invalid_hash');
    await expectError(await app.request('/stop/zzzzzz', post), 400, 'invalid_hash');
    await expectError(await app.request(`/start/${'0'.repeat(33)}`, post), 400, 'invalid_hash');
    await expectError(await app.request('/start/%2e%2e%2fetc', post), 400, 'invalid_hash');
    const nf = await expectError(await app.request('/stop/ffffffff', post), 404, 'tunnel_not_found');
    expect(nf.error.message).toContain('ffffffff');
  });

  it('409 for an ambiguous prefix, listing the matches', async () => {
    // Find two names whose hashes share their first 4 characters.
    const seen = new Map<string, string>();
    let pair: [string, string] | null = null;
    const { spec } = await import('./fake-engine.js');
    for (let i = 0; pair === null; i++) {
      const h = spec({ name: `t${i}`, remote_host: 'h', remote_port: 1, local_port: 2, direction: 'remote_to_local' }).hash;
      const other = seen.get(h.slice(0, 4));
      if (other !== undefined) pair = [other, `t${i}`];
      seen.set(h.slice(0, 4), `t${i}`);
    }
    const { app, engine } = setup({ entries: pair.map((name) => ({ name, remote_host: 'h', remote_port: 1, local_port: 2, direction: 'remote_to_local' as const })) });
    const [a, b] = engine.tunnels().map((t) => t.hash);
    const r = await app.request(`/start/${a!.slice(0, 4)}`, post);
    const body = (await expectError(r, 409, 'ambiguous_hash')) as { error: { message: string; matches?: string[] } };
    expect(body.error.message).toContain(a!);
    expect(body.error.message).toContain(b!);
    expect(body.error.matches?.sort()).toEqual([a, b].sort());
  });

  it('503 for an unknown hash to start while the file is invalid (it may be in the new file)', async () => {
    const { app, engine } = setup();
    engine.health = { ...engine.health, valid: false, error: 'line 7, column 3: bad direction' };
    const body = await expectError(await app.request('/start/abcdef12', post), 503, 'config_invalid');
    expect(body.error.message).toContain('line 7, column 3');
  });
});

describe('GET /logs/:hash and /logs', () => {
  it('returns the recent ssh output in the reference shape: log as text, lines as an array', async () => {
    const { app, engine } = setup();
    const hash = engine.tunnels()[1]!.hash;
    expect(await json(await app.request(`/logs/${hash}`))).toEqual({ status: 'success', tunnel_hash: hash, log: '', lines: [] });
    engine.log(hash, 'debug1: Local forwarding listening on 127.0.0.1 port 3000.');
    engine.log(hash, 'Authenticated to bastion ("127.0.0.1":22) using "publickey".');
    expect(await json(await app.request(`/logs/${hash.slice(0, 4)}`))).toEqual({
      status: 'success',
      tunnel_hash: hash,
      log: 'debug1: Local forwarding listening on 127.0.0.1 port 3000.\nAuthenticated to bastion ("127.0.0.1":22) using "publickey".',
      lines: ['debug1: Local forwarding listening on 127.0.0.1 port 3000.', 'Authenticated to bastion ("127.0.0.1":22) using "publickey".'],
    });
    await expectError(await app.request('/logs/0000ffff'), 404, 'tunnel_not_found');
    await expectError(await app.request('/logs/nope'), 400, 'invalid_hash');
  });

  it('GET /logs lists only tunnels with output, with their line count and when the last line came', async () => {
    const { app, engine } = setup();
    expect(await json(await app.request('/logs'))).toEqual([]);
    const t = engine.tunnels()[0]!;
    engine.log(t.hash, 'Connection refused');
    const body = (await json(await app.request('/logs'))) as { hash: string; name: string; lines: number; modified: string }[];
    expect(body).toEqual([{ hash: t.hash, name: 'db', lines: 1, modified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
  });

  it('an ambiguous prefix is 409 with the matches, in the error shape', async () => {
    // Two entries whose hashes share their first four digits (found by trying names).
    const entry = (i: number) => ({ name: `t${i}`, remote_host: 'h', remote_port: 1000, local_port: 2000, direction: 'remote_to_local' as const });
    const seen = new Map<string, number>();
    let pair: [number, number] | null = null;
    for (let i = 0; pair === null; i++) {
      const p = spec(entry(i)).hash.slice(0, 4);
      const j = seen.get(p);
      if (j !== undefined) pair = [j, i];
      seen.set(p, i);
    }
    const { app, engine } = setup({ entries: [entry(pair[0]), entry(pair[1])] });
    const [a, b] = engine.tunnels();
    const r = await app.request(`/logs/${a!.hash.slice(0, 4)}`);
    expect(r.status).toBe(409);
    const body = (await r.json()) as { error: { code: string; matches: string[] } };
    expect(body.error.code).toBe('ambiguous_hash');
    expect(body.error.matches.sort()).toEqual([a!.hash, b!.hash].sort());
  });
});

describe('POST /restart/:hash', () => {
  it('stops then starts the tunnel and returns its record; a manual stop is undone', async () => {
    const { app, engine } = setup();
    const hash = engine.tunnels()[0]!.hash;
    await app.request(`/start/${hash}`, post);
    await sleep(60);
    const running = (await json(await app.request('/status'))) as StatusRecord[];
    const pid = running[0]!.pid;
    expect(running[0]!.status).toBe('RUNNING');
    const r = (await json(await app.request(`/restart/${hash.slice(0, 8)}`, post))) as StatusRecord;
    expect(r.hash).toBe(hash);
    expect(r.status).toBe('STARTING');
    await sleep(60);
    const after = ((await json(await app.request('/status'))) as StatusRecord[])[0]!;
    expect(after.status).toBe('RUNNING');
    expect(after.pid).not.toBe(pid);
    await expectError(await app.request('/restart/ffff0000', post), 404, 'tunnel_not_found');
    const wrong = await app.request(`/restart/${hash}`);
    expect(wrong.status).toBe(405);
  });
});

describe('POST /reload', () => {
  it('200 with the reload record when applied', async () => {
    const { app, engine } = setup();
    engine.nextReload = { added: ['a'], removed: [] };
    const body = await json(await app.request('/reload', post));
    expect(body).toMatchObject({ type: 'reload', ok: true, added: ['a'], removed: [], error: null });
  });

  it('503 config_invalid with the problems when nothing was applied', async () => {
    const { app, engine } = setup();
    engine.health = { ...engine.health, valid: false, error: 'line 2, column 7: tunnels[0].remote_port: expected a port 1-65535, found "99999"' };
    const body = await expectError(await app.request('/reload', post), 503, 'config_invalid');
    expect(body.error.message).toContain('line 2, column 7');
    expect(body.error.message).toContain('/etc/tunnels/config.yaml');
  });
});

describe('GET /health', () => {
  it('is 200 and says only whether the config is usable, with counts', async () => {
    const { app, engine } = setup();
    expect(await json(await app.request('/health'))).toEqual({ ok: true, loading: false, config: { valid: true, error: null, missing: false, problems: 0 }, tunnels: 3, running: 0 });
    engine.health = { ...engine.health, valid: false, applied: 'none', error: 'line 1, column 1: bad', missing: false, problems: [{ line: 1, column: 1, field: '(file)', expected: 'YAML', found: 'bad' }] };
    const r = await app.request('/health');
    expect(r.status).toBe(200);
    // `error` says that there are problems and where to read them, never which.
    expect(await r.json()).toEqual({ ok: true, loading: false, config: { valid: false, error: HEALTH_ERROR, missing: false, problems: 1 }, tunnels: 3, running: 0 });
  });

  it('names no tunnel, host, path, line, column or message of the config\'s problems, and counts what runs', async () => {
    const { app, engine } = setup();
    const problem = { line: 4, column: 18, field: 'tunnels[1].remote_port', expected: 'a port', found: '"x"' };
    engine.health = {
      ...engine.health,
      valid: false,
      applied: 'partial',
      error: 'line 4, column 18: tunnels[1].remote_port: expected a port, found "x"',
      problems: [problem],
      rejected: [{ index: 1, line: 3, column: 5, name: 'secret-db', problems: [problem] }],
      warnings: ['line 9, column 5: tunnels[2].comment_key: an unknown key'],
    };
    const [db] = engine.tunnels();
    await app.request(`/start/${db!.hash}`, post);
    let text = '';
    for (let i = 0; i < 50 && !text.includes('"running":1'); i++) {
      await sleep(20);
      text = await (await app.request('/health')).text();
    }
    expect(JSON.parse(text)).toEqual({ ok: true, loading: false, config: { valid: false, error: HEALTH_ERROR, missing: false, problems: 1 }, tunnels: 3, running: 1 });
    for (const secret of ['secret-db', 'bastion', 'tunnels[', 'line 4', 'column', '/etc/tunnels', '"x"', 'comment_key', db!.name, db!.hash.slice(0, 8)]) expect(text).not.toContain(secret);
  });

  it('says `loading` and nothing of the file until the first load is done', async () => {
    const { app, engine } = setup();
    engine.health = { ...engine.health, loaded_at: null };
    expect(await json(await app.request('/health'))).toEqual({ ok: true, loading: true, config: null, tunnels: 0, running: 0 });
  });
});

describe('GET /health/details', () => {
  it('has what /health leaves out: the problems with line and column, the entries left out, warnings and exposure', async () => {
    const { app, engine } = setup();
    const problem = { line: 4, column: 18, field: 'tunnels[1].remote_port', expected: 'a port', found: '"x"' };
    const [, web] = engine.tunnels();
    engine.health = {
      ...engine.health,
      valid: false,
      applied: 'partial',
      error: 'line 4, column 18: tunnels[1].remote_port: expected a port, found "x"',
      problems: [problem],
      rejected: [{ index: 1, line: 3, column: 5, name: 'secret-db', problems: [problem] }],
      warnings: ['line 9, column 5: tunnels[2].comment_key: an unknown key'],
      exposure: [{ hash: web!.hash, name: 'web', line: 3, exposure: { kind: 'remote_all', flag: '-R', listen: '0.0.0.0:8081', server: 'bastion', target: 'localhost:3000', reach: 'server_network' }, message: 'its -R forward asks bastion to listen on all of its addresses' }],
    };
    expect(await json(await app.request('/health/details'))).toEqual({
      ok: true,
      loading: false,
      // The file the daemon runs, absolute: the panel edits this one when not told another.
      config_path: '/etc/tunnels/config.yaml',
      config: {
        valid: false,
        error: 'line 4, column 18: tunnels[1].remote_port: expected a port, found "x"',
        missing: false,
        problems: 1,
        applied: 'partial',
        rejected: [{ index: 1, line: 3, column: 5, problems: ['line 4, column 18: tunnels[1].remote_port: expected a port, found "x"'] }],
        warnings: ['line 9, column 5: tunnels[2].comment_key: an unknown key'],
      },
      tunnels: 3,
      running: 0,
      exposure: [{ hash: web!.hash, name: 'web', line: 3, kind: 'remote_all', message: 'its -R forward asks bastion to listen on all of its addresses' }],
    });
  });

  it('is a control route: the token on TCP, as for /status', async () => {
    const { app } = setup({ transport: 'tcp', tokens: ['t0ken'] });
    expect((await app.request('/health')).status).toBe(200);
    await expectError(await app.request('/health/details'), 401, 'unauthorized');
    expect((await app.request('/health/details', { headers: { authorization: 'Bearer t0ken' } })).status).toBe(200);
  });

  it('says `loading` until the first load is done', async () => {
    const { app, engine } = setup();
    engine.health = { ...engine.health, loaded_at: null };
    expect(await json(await app.request('/health/details'))).toEqual({ ok: true, loading: true, config_path: '/etc/tunnels/config.yaml', config: null, tunnels: 0, running: 0, exposure: [] });
  });
});

describe('errors', () => {
  it('404 not_found for an unknown route, 405 with Allow for a known path with the wrong method', async () => {
    const { app } = setup();
    await expectError(await app.request('/nope'), 404, 'not_found');
    const r = await app.request('/start');
    await expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('POST');
    const r2 = await app.request('/status', post);
    await expectError(r2, 405, 'method_not_allowed');
    expect(r2.headers.get('allow')).toBe('GET, HEAD');
    await expectError(await app.request('/logs/abcd', { method: 'DELETE' }), 405, 'method_not_allowed');
  });

  it('a bug is a 500 internal_error without stack or detail, reported to onBug', async () => {
    const { app, engine, bugs } = setup();
    engine.broken = true;
    const r = await app.request('/status');
    const text = await r.text();
    expect(r.status).toBe(500);
    expect(JSON.parse(text).error.code).toBe('internal_error');
    expect(text).not.toContain('/secret/path');
    expect(text).not.toMatch(/at .*\.ts/);
    expect(bugs).toHaveLength(1);
    await expectError(await app.request('/start', post), 500, 'internal_error');
  });

  it('ignores request bodies on POST routes', async () => {
    const { app, engine } = setup();
    const r = await app.request(`/stop/${engine.tunnels()[0]!.hash}`, { method: 'POST', body: 'not json {', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(200);
  });
});

describe('token', () => {
  const tokens = ['s3cret-one', 'other-token'];

  it('401 with WWW-Authenticate without a token or with a wrong one', async () => {
    const { app } = setup({ tokens });
    for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic czNjcmV0LW9uZQ==' }, { authorization: 'Bearer s3cret-one-longer' }, { authorization: 'Bearer' }]) {
      for (const [path, init] of [['/status', {}], ['/start', post], ['/metrics', {}], ['/events', {}], ['/list', {}], ['/nope', {}]] as const) {
        const r = await app.request(path, { ...init, headers });
        await expectError(r, 401, 'unauthorized');
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="tunnel-manager"/);
      }
    }
  });

  it('accepts any of the tokens', async () => {
    const { app } = setup({ tokens });
    for (const t of tokens) {
      expect((await app.request('/status', { headers: { authorization: `Bearer ${t}` } })).status).toBe(200);
      expect((await app.request('/status', { headers: { authorization: `bearer  ${t}` } })).status).toBe(200);
    }
  });

  it('/health stays open and /v1 is not guarded by it', async () => {
    const { app } = setup({ tokens, proxy: true });
    expect((await app.request('/health')).status).toBe(200);
    const v1 = await app.request('/v1/models');
    expect(v1.status).toBe(200);
    expect(await v1.json()).toEqual({ object: 'list', data: [] });
    expect((await app.request('/v1/nope')).status).toBe(404);
    // A path that merely starts with "v1" is still a control path.
    expect((await app.request('/v1x')).status).toBe(401);
  });

  it('the socket transport needs no token', async () => {
    const { app } = setup({ tokens, transport: 'socket' });
    expect((await app.request('/status')).status).toBe(200);
  });
});

describe('no CORS', () => {
  it('never sends access-control-* headers, even to a preflight from another origin', async () => {
    const { app, engine } = setup();
    const origin = { origin: 'https://evil.example' };
    const responses = [
      await app.request('/status', { headers: origin }),
      await app.request('/health', { headers: origin }),
      await app.request('/start', { method: 'OPTIONS', headers: { ...origin, 'access-control-request-method': 'POST' } }),
      await app.request(`/stop/${engine.tunnels()[0]!.hash}`, { method: 'POST', headers: origin }),
    ];
    for (const r of responses) {
      for (const [k] of r.headers) expect(k).not.toMatch(/^access-control-/);
    }
  });
});

describe('GET /events', () => {
  it('sends a connected comment, then a status event on a stop and a reload event on a reload; unsubscribes on close', async () => {
    const { app, engine } = setup();
    const hash = engine.tunnels()[0]!.hash;
    await app.request(`/start/${hash}`, post);
    await sleep(60);
    // The app's own subscribers (the /status cache), before any stream.
    const base = engine.listenerCount();
    const r = await app.request('/events');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    const body = r.body!;
    const first = await readSse(body, (items) => items.length > 0);
    expect(first[0]).toEqual({ kind: 'comment', text: 'connected' });
    expect(engine.listenerCount()).toBe(base + 1);

    const stopped = (await json(await app.request(`/stop/${hash}`, post))) as StatusRecord;
    const items = await readSse(body, (xs) => xs.some((x) => x.kind === 'event'));
    const ev = items.find((x) => x.kind === 'event');
    expect(ev).toMatchObject({ kind: 'event', event: 'status' });
    // The data is the record exactly as POST /stop/:hash returned it.
    expect(JSON.parse((ev as { data: string }).data)).toEqual(stopped);

    await app.request('/reload', post);
    const more = await readSse(body, (xs) => xs.some((x) => x.kind === 'event'));
    const reload = more.find((x) => x.kind === 'event') as { event: string; data: string };
    expect(reload.event).toBe('reload');
    expect(JSON.parse(reload.data)).toMatchObject({ type: 'reload', ok: true });

    await body.cancel();
    for (let i = 0; i < 50 && engine.listenerCount() > base; i++) await sleep(10);
    expect(engine.listenerCount()).toBe(base);
  });

  it('caps open streams across the listeners: one more gets 503 too_many_streams until one closes', async () => {
    const slots = new EventStreamSlots(2);
    const tcp = build({ eventSlots: slots });
    const socket = build({ transport: 'socket', eventSlots: slots });
    const connected = (items: SseItem[]) => items.length > 0;
    const a = await tcp.app.request('/events');
    await readSse(a.body!, connected);
    const b = await socket.app.request('/events');
    await readSse(b.body!, connected);
    expect(slots.open).toBe(2);

    for (const app of [tcp.app, socket.app]) {
      const refused = await app.request('/events');
      await expectError(refused, 503, 'too_many_streams');
      expect(refused.headers.get('retry-after')).toBe('5');
    }
    const body = (await (await socket.app.request('/events')).json()) as ApiErrorBody;
    expect(body.error.message).toMatch(/already serves 2 \/events streams/);
    expect(slots.open).toBe(2);

    await a.body!.cancel();
    for (let i = 0; i < 50 && slots.open > 1; i++) await sleep(10);
    expect(slots.open).toBe(1);
    const c = await socket.app.request('/events');
    expect(c.status).toBe(200);
    await readSse(c.body!, connected);
    await Promise.all([b.body!.cancel(), c.body!.cancel()]);
    for (let i = 0; i < 50 && slots.open > 0; i++) await sleep(10);
    expect(slots.open).toBe(0);
  });

  it('sends keep-alive comments', async () => {
    const { app } = setup({ keepAliveMs: 30 });
    const r = await app.request('/events');
    const items = await readSse(r.body!, (xs) => xs.filter((x) => x.kind === 'comment' && x.text === 'keep-alive').length >= 2);
    expect(items[0]).toEqual({ kind: 'comment', text: 'connected' });
    await r.body!.cancel();
  });
});
