import http, { type IncomingMessage } from 'node:http';
import { Duplex, Readable } from 'node:stream';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import type { RequestListener } from '../edge/http-listener.js';

/**
 * Answers a WHATWG `Request` with a node:http handler, over a connection that lives in
 * memory: node's own HTTP client writes the request onto it and node's own HTTP server
 * parses it, so the handler gets a real IncomingMessage and ServerResponse, as on a
 * socket. This is how the proxy's routes, which work on node's request and response
 * (bodies streamed both ways, never turned into Web streams), answer Hono's
 * `app.request()` and any host that is not @hono/node-server. The answer streams
 * back as it is written; aborting the request's signal closes the connection, which
 * the handler sees as a client that left.
 */
export function answerInMemory(request: Request, handler: RequestListener): Promise<Response> {
  const [clientEnd, serverEnd] = connectionPair();
  // Never listening: it only parses what arrives on the in-memory connection.
  const server = http.createServer(handler);
  server.emit('connection', serverEnd);
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  headers.host ??= url.host;
  // One request per connection: it ends with the answer.
  headers.connection = 'close';
  return new Promise((resolve, reject) => {
    const out = http.request({ createConnection: () => clientEnd, method: request.method, path: `${url.pathname}${url.search}`, headers }, (answer) => resolve(toResponse(answer, request.method)));
    out.on('error', reject);
    const gone = (): void => {
      out.destroy();
      clientEnd.destroy();
    };
    if (request.signal.aborted) gone();
    else request.signal.addEventListener('abort', gone, { once: true });
    if (request.body === null) out.end();
    else Readable.fromWeb(request.body as NodeWebStream<Uint8Array>).on('error', gone).pipe(out);
  });
}

function toResponse(answer: IncomingMessage, method: string): Response {
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    // The in-memory connection's own framing, not the answer's.
    if (!/^(connection|transfer-encoding|keep-alive)$/i.test(name)) headers.append(name, raw[i + 1] ?? '');
  }
  const status = answer.statusCode ?? 500;
  const empty = method === 'HEAD' || status === 204 || status === 304;
  if (empty) answer.resume();
  const body = empty ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: answer.statusMessage, headers });
}

/** Two ends of a connection in memory: what one end writes, the other reads; either end closing closes both. */
function connectionPair(): [Duplex, Duplex] {
  let b: Duplex | null = null;
  const a = connectionEnd(() => b);
  b = connectionEnd(() => a);
  return [a, b];
}

function connectionEnd(other: () => Duplex | null): Duplex {
  return new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      other()?.push(chunk);
      done();
    },
    final(done) {
      other()?.push(null);
      done();
    },
    destroy(error, done) {
      const o = other();
      if (o !== null && !o.destroyed) o.destroy();
      done(error);
    },
  });
}
