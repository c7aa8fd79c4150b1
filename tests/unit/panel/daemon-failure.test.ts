// Every way the panel can fail to talk to the daemon gets its own code and a sentence
// that says what to do, from real sockets: nothing listening, a server that never
// answers, a token missing or wrong, a host refused, a daemon still loading, and
// something else listening at the daemon's address (a web server, a non-HTTP service).
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDaemonClient } from '../../../src/panel/daemon-client.js';
import { createDaemonApp } from '../../../src/panel/routes-daemon.js';

const servers: (Server | TcpServer)[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const sock of sockets) sock.destroy();
    await new Promise((r) => s.close(r));
  }
  sockets.clear();
});

async function listen<T extends Server | TcpServer>(s: T): Promise<string> {
  servers.push(s);
  s.on('connection', (sock: Socket) => sockets.add(sock));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
}

/** A stand-in that answers every request with `status` and `body` (JSON when an object). */
const answering = (status: number, body: unknown) =>
  listen(createHttpServer((_req, res) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json' }).end(text);
  }));

/** Short timeouts only where no answer is the point: a loaded machine may answer slowly. */
async function failure(url: string, token: string | null = null, timeoutMs?: number) {
  const client = createDaemonClient(url, token, timeoutMs === undefined ? {} : { getTimeoutMs: timeoutMs, eventsOpenTimeoutMs: timeoutMs });
  const [get, events] = await Promise.all([client.get('/status'), client.events(new AbortController().signal)]);
  if (get.ok || events.ok) throw new Error('expected both to fail');
  // The list and the live events say the same thing.
  expect(events.error).toEqual(get.error);
  return get.error;
}

describe('why the panel cannot talk to the daemon', () => {
  it('nothing listens: start the daemon or point the panel at it', async () => {
    const url = await listen(createTcpServer());
    await new Promise((r) => servers.pop()!.close(r));
    const f = await failure(url);
    expect(f).toMatchObject({ reason: 'connection', code: 'daemon_refused', params: { where: url } });
    expect(f.message).toMatch(/start the daemon .*--api or TUNNEL_API_URL/);
  });

  it('no answer in time', async () => {
    const url = await listen(createHttpServer(() => undefined));
    expect(await failure(url, null, 300)).toMatchObject({ code: 'daemon_timeout', params: { where: url } });
  });

  it('a token the daemon needs and the panel lacks, or a wrong one: TUNNEL_API_TOKEN named, never "not reachable"', async () => {
    const url = await answering(401, { error: { code: 'unauthorized', message: 'missing or wrong token' } });
    const missing = await failure(url);
    expect(missing).toMatchObject({ code: 'daemon_token_missing' });
    expect(missing.message).toMatch(/needs a token: start the panel with TUNNEL_API_TOKEN/);
    const wrong = await failure(url, 'not-the-daemons');
    expect(wrong).toMatchObject({ code: 'daemon_token_rejected' });
    expect(wrong.message).toMatch(/refused the panel's TUNNEL_API_TOKEN/);
    expect(wrong.message).not.toContain('not-the-daemons');
  });

  it('a request the daemon refuses for its host or origin', async () => {
    const url = await answering(403, { error: { code: 'host_not_allowed', message: 'not a loopback host' } });
    expect(await failure(url)).toMatchObject({ code: 'daemon_forbidden', params: { detail: 'host_not_allowed' } });
  });

  it('a daemon still loading its config', async () => {
    const url = await answering(503, { error: { code: 'loading', message: 'the config is being loaded' } });
    expect(await failure(url)).toMatchObject({ code: 'daemon_loading' });
  });

  it('something else at the address: a web page, or not HTTP at all', async () => {
    const web = await answering(404, '<html>Not Found</html>');
    expect(await failure(web)).toMatchObject({ code: 'daemon_wrong_service', params: { detail: '404' } });
    const ok = await answering(200, '<html>welcome</html>');
    expect(await failure(ok)).toMatchObject({ code: 'daemon_wrong_service' });
    const raw = await listen(createTcpServer((s) => s.end('SSH-2.0-OpenSSH_9.2\r\n')));
    expect(await failure(raw)).toMatchObject({ code: 'daemon_wrong_service' });
  });

  it('a host name that does not resolve', async () => {
    expect(await failure('http://no-such-host.invalid:8080')).toMatchObject({ code: 'daemon_unresolved' });
  });

  it('the daemon\'s own errors pass on as it said them', async () => {
    const url = await answering(404, { error: { code: 'tunnel_not_found', message: 'no tunnel abc' } });
    const r = await createDaemonClient(url, null).get('/status');
    expect(!r.ok && r.error).toEqual({ reason: 'daemon', status: 404, code: 'tunnel_not_found', message: 'no tunnel abc' });
  });

  it('start, stop and logs answer the page with the same code, its values and a status to match', async () => {
    const token = await answering(401, { error: { code: 'unauthorized', message: 'missing or wrong token' } });
    const loading = await answering(503, { error: { code: 'loading', message: 'the config is being loaded' } });
    const call = async (url: string, path: string, method = 'POST') => {
      const res = await createDaemonApp({ daemon: createDaemonClient(url, null) }).request(path, { method });
      return { status: res.status, body: (await res.json()) as { error: { code: string }; params?: Record<string, string> } };
    };
    expect(await call(token, '/start')).toMatchObject({ status: 502, body: { error: { code: 'daemon_token_missing' }, params: { where: token } } });
    expect(await call(token, `/logs/${'a'.repeat(32)}`, 'GET')).toMatchObject({ status: 502, body: { error: { code: 'daemon_token_missing' } } });
    expect(await call(loading, `/stop/${'a'.repeat(32)}`)).toMatchObject({ status: 503, body: { error: { code: 'daemon_loading' } } });
  });
});
