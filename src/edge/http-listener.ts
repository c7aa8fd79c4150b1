/**
 * What the daemon's listeners and `tunnel-manager proxy`'s listener answer to
 * requests that never reach their apps: the `{"error": {…}}` body every other error
 * has, not Node's bare status line. The shape is OpenAI's (`message`, `type`,
 * `param`, `code`), which also carries the control API's `code` and `message`.
 */
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** The path of a request target, without its query. */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * True for a path every layer reads as written: no percent-encoding, backslash,
 * doubled slash or dot segment, which the adapter or the router may resolve into
 * another path (Hono routes `/%761/models` and `/list/../v1/models` to /v1). A rule
 * that depends on the path decides a path that is not plain as strictly as any path
 * it could become.
 */
export function isPlainPath(path: string): boolean {
  return !/[%\\]|\/\/|(?:^|\/)\.\.?(?:\/|$)/.test(path);
}

/** True for a path of the /v1 group (the model proxy), which has its own keys. */
export function isV1Path(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

/** The JSON body of an error answered outside the apps. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
}

/**
 * Node's own parser refuses some requests (a URL over 16 KiB, a malformed request
 * line, a bad header) before any app sees them; they get the JSON body too.
 */
export function answerParserErrors(server: http.Server, connectLingerMs = CONNECT_LINGER_MS): void {
  server.on('clientError', (e: NodeJS.ErrnoException, socket: Duplex) => {
    const timedOut = e.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    // The answer in progress on this connection: Node sets null once one has finished
    // (a kept-alive connection between requests), which counts as none.
    const answering = (socket as Duplex & { _httpMessage?: ServerResponseState | null })._httpMessage ?? undefined;
    // A request still arriving when its time is up may have reached a route already,
    // which waits for its body and has not answered: the 408 replaces that answer. An
    // answer to any other request (complete, or already started) is never written over.
    const waitingForBody = answering !== undefined && timedOut && !answering.headersSent && answering.req?.complete === false;
    if (!socket.writable || (answering !== undefined && !waitingForBody)) {
      socket.destroy();
      return;
    }
    const tooLarge = e.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : timedOut ? '408 Request Timeout' : '400 Bad Request';
    // Before its head is complete a request has headersTimeout; after, requestTimeout in all.
    const limit = Math.round((answering === undefined ? Math.min(server.headersTimeout, server.requestTimeout || Infinity) : server.requestTimeout) / 1000);
    const body = tooLarge
      ? errorBody('request_too_large', 'the request line or headers are larger than 16 KiB')
      : timedOut
        ? errorBody('request_timeout', `the request was not received in full within ${limit} s`)
        : errorBody('bad_request', 'the request is not valid HTTP/1.1');
    socket.end(rawAnswer(status, body, answering?.req?.method === 'HEAD'));
  });
  // A CONNECT (a forward proxy's method) reaches no request handler: Node closes the
  // connection without a word unless it is answered here. Node no longer tracks the
  // socket (its closeAllConnections does not reach it), so it is closed here: once the
  // client closes its side, CONNECT_LINGER_MS after the answer, or when the server
  // closes (closeEveryConnection), whichever is first.
  const connects = new Set<Duplex>();
  handedOver.set(server, connects);
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    connects.add(socket);
    socket.once('close', () => connects.delete(socket));
    socket.on('error', () => socket.destroy());
    // Read (and drop) what the client sends, so that closing never meets unread data.
    socket.resume();
    socket.once('end', () => socket.destroy());
    setTimeout(() => socket.destroy(), connectLingerMs).unref();
    socket.end(rawAnswer('400 Bad Request', errorBody('bad_request', `CONNECT ${JSON.stringify((req.url ?? '').slice(0, 200))}: this server is not a forward proxy; send requests to its paths (/v1/…)`), false));
  });
}

// How long a CONNECT's connection is kept after its answer, for the client to read it and close.
const CONNECT_LINGER_MS = 2_000;

// The sockets of each server's CONNECTs, which Node no longer tracks.
const handedOver = new WeakMap<http.Server, Set<Duplex>>();

/** Ends every connection of a server at once (for its shutdown): those Node tracks, and the CONNECTs it handed over. */
export function closeEveryConnection(server: http.Server): void {
  server.closeAllConnections();
  for (const socket of handedOver.get(server) ?? []) socket.destroy();
}

/**
 * An answer written on the socket itself, where Node has no response object to write
 * it with (a request it could not parse, a CONNECT); it closes the connection. Every
 * answer carries an id (SPEC §9); the request's own is not read there, so a new one.
 */
function rawAnswer(status: string, body: string, head: boolean): string {
  const lines = `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n`;
  return head ? lines : lines + body;
}

/** What the clientError handler reads of the answer in progress on a connection. */
interface ServerResponseState {
  headersSent: boolean;
  req?: { complete: boolean; method?: string };
}

/**
 * HTTP/1.1 requires `Host`; Node refuses a request without it with a bare 400 when
 * `requireHostHeader` is on, so it is turned off (see `LISTENER_OPTIONS`) and the
 * refusal made here, with the JSON body. HTTP/1.0 does not require it and is served.
 *
 * A request target in absolute form (`POST http://host/v1/chat/completions`, which
 * RFC 9112 §3.2.2 says servers must accept) is turned into its origin form (path and
 * query) before any route reads `req.url`, and its authority replaces `Host`, as that
 * section says: every route sees one form. `OPTIONS *` is answered here with
 * `methods`, what the server's routes take; `*` with another method, and a target
 * that is neither a path nor an http(s) URL with a host, are refused with a 400 that
 * shows it, when Node's parser lets them through (it refuses some itself, with the
 * 400 above).
 */
export function requireHost(listener: RequestListener, methods: string): RequestListener {
  return (req, res) => {
    if (req.headers.host === undefined && !(req.httpVersionMajor === 1 && req.httpVersionMinor === 0)) {
      return refuse(res, `an HTTP/${req.httpVersion} request needs a Host header`);
    }
    const target = req.url ?? '/';
    if (target === '*') {
      // The asterisk form asks about the server itself, and only OPTIONS may use it (RFC 9112 §3.2.4).
      if (req.method !== 'OPTIONS') return refuse(res, `the request target "*" is for OPTIONS only, not ${req.method ?? ''}`);
      res.writeHead(204, { allow: methods, 'x-request-id': randomUUID() });
      res.end();
      return;
    }
    if (!target.startsWith('/')) {
      const origin = originForm(target);
      if (origin === null) {
        return refuse(res, `the request target ${JSON.stringify(target.slice(0, 200))} is neither a path (/v1/…) nor an http(s) URL with a host and no user name`);
      }
      req.url = origin.path;
      req.headers.host = origin.host;
    }
    listener(req, res);
  };
}

/**
 * The origin form of an absolute-form target: its path and query exactly as written
 * (so `..`, `%2e%2e`, `\\` and doubled slashes reach the routes as they would in a plain
 * path, not resolved the way a URL parser resolves them), and its host as the URL
 * parser reads it, for `Host`. Null for anything but an http(s) URL with a host and
 * no user information.
 */
export function originForm(target: string): { path: string; host: string } | null {
  const scheme = /^https?:\/\//i.exec(target);
  if (scheme === null || !URL.canParse(target)) return null;
  const rest = target.slice(scheme[0].length);
  const end = rest.search(/[/?]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  // No host, or credentials in the URL (RFC 9110 §4.2.4: to be treated as an error).
  if (authority === '' || authority.includes('@')) return null;
  const path = end === -1 ? '/' : rest[end] === '?' ? `/${rest.slice(end)}` : rest.slice(end);
  return { path, host: new URL(target).host };
}

/** A 400 answered by the listener itself, with a new request id (every answer has one, SPEC §9). */
function refuse(res: http.ServerResponse, message: string): void {
  const body = errorBody('bad_request', message);
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': randomUUID(), connection: 'close' });
  res.end(body);
}

/**
 * How long a request may take to arrive, headers and body (Node's own default, said
 * here so that every listener has it): a client that trickles a body is cut off with a
 * 408. It does not bound the answer: a stream lasts as long as its provider talks.
 */
export const REQUEST_TIMEOUT_MS = 300_000;

/**
 * Options for `http.createServer` that go with `requireHost`. Idle kept-alive
 * connections are kept 65 s, longer than clients keep theirs (httpx drops an idle one
 * after 5 s, undici's fetch after 4 s): the client always closes first, so a request
 * of a client that does not read `Keep-Alive: timeout` never meets a connection the
 * server is closing at that moment (Node's own 5 s would race with httpx's).
 */
export const LISTENER_OPTIONS: http.ServerOptions = { requireHostHeader: false, keepAliveTimeout: 65_000, requestTimeout: REQUEST_TIMEOUT_MS };

// How much of a refused body is read and thrown away, and for how long, before the
// connection is cut anyway; and how long a client then has to read the answer.
const DISCARD_BYTES_FACTOR = 4;
const DISCARD_MS = 10_000;
const LAST_READ_MS = 2_000;

/**
 * Reads and drops the rest of a body refused as too large, bounded. Closing at once
 * would make a client that is still sending (no `Expect: 100-continue`) fail with EPIPE
 * before it reads the 413, and a close with its bytes unread resets the connection,
 * which can throw away the answer the client has not read yet. So: once 4 times the
 * limit has been dropped, reading stops (the client's writes wait, and it is free to
 * read the answer), and the connection is cut 2 s later; after 10 s in all, at once.
 * Reading forever would let a client hold the connection. Nothing read is kept, so a
 * refused upload leaves no memory behind.
 */
export function discardRest(req: IncomingMessage, limit: number): void {
  let dropped = 0;
  const cut = setTimeout(() => req.socket.destroy(), DISCARD_MS);
  cut.unref();
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped <= DISCARD_BYTES_FACTOR * limit) return;
    req.off('data', onData);
    req.pause();
    setTimeout(() => req.socket.destroy(), LAST_READ_MS).unref();
  };
  req.on('data', onData);
  req.once('close', () => clearTimeout(cut));
  req.resume();
}
