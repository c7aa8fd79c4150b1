/**
 * An OpenAI-like upstream for the proxy tests. What it does is chosen by the bare
 * model name the proxy forwards (model names hold colons, which also exercises the
 * first-colon split):
 *
 *   anything else        a canned chat.completion (200) naming the model it got
 *   slow:<ms>            the same, after <ms>
 *   hang                 never answers (not even headers)
 *   error:<status>       an OpenAI error body with that status
 *   echo-key:<status>    an error body quoting the Authorization header it received
 *   stream:<n>:<ms>      n SSE chunks <ms> apart, then [DONE]
 *   gated-stream         one chunk, then waits for `release()`, then one more and [DONE]
 *   gated-head           the SSE head alone, then waits for `release()`, then one chunk and [DONE]
 *   stall-stream         one chunk, then silence
 *   die-stream           one chunk, then the socket is destroyed
 *   json-stall           200 JSON headers and half a body, then silence
 *   cut-event            one whole event, then half of the next, then the socket is destroyed
 *   split-events:<eol>   three events with line ends <eol> (lf, crlf or cr), written a few
 *                        bytes at a time so that events straddle reads, then [DONE]
 *   no-final-blank       one event and `data: [DONE]` with a single line end, then the end
 *   gz:<enc>:<kind>      compressed with <enc> (gzip, deflate, br) although the proxy asked
 *                        for identity; <kind> is json, stream (three events and [DONE]),
 *                        cut (one event, half of the next, destroyed) or key:<status>
 *                        (an error body quoting the Authorization header) or corrupt (a
 *                        500 whose body does not decode)
 *
 * Options: `idleCloseMs` closes a kept-alive connection that has sat idle that long,
 * as uvicorn does (a FIN, no `Keep-Alive` header announcing it); `raceAfterMs` meets
 * a request arriving on a connection idle at least that long with that close instead
 * of an answer, as when the server's idle timer fires while the request is on its way.
 *
 * The other endpoints (responses, embeddings, completions, Anthropic's messages) and
 * streamed chat for a plain model answer as the real APIs do: see mock-formats.ts.
 *
 * Every request is recorded with its headers and body, and with how it ended: the
 * mock finished its answer, or the client (the proxy) closed the socket first.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { answerFormat } from './mock-formats.js';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body exactly as received. */
  bytes: Buffer;
  json: Record<string, unknown> | null;
  /** A multipart upload as the server read it. */
  form?: FormData | undefined;
  /** Resolves with how the exchange ended. */
  ended: Promise<'finished' | 'client_closed'>;
}

export interface MockUpstream {
  port: number;
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  received: Received[];
  /** The next request to arrive (or the one at `index` if it already has). */
  request(index: number): Promise<Received>;
  /** Lets every waiting `gated-stream` finish. */
  release(): void;
  /** What `GET /v1/models` answers; `'hang'` never answers. */
  models: { id: string; owned_by?: string }[] | 'hang';
  /**
   * How `GET /v1/models` is compressed, as a provider that ignores the proxy's
   * `accept-encoding: identity` would: `deflate-raw` is raw deflate sent as `deflate`;
   * any other name is sent as the content-encoding of a plain body. Unset: plain.
   */
  modelsEncoding?: 'gzip' | 'deflate' | 'deflate-raw' | 'br' | (string & {});
  /** Total `/models` requests seen. */
  modelsCalls: number;
  /** Requests met by the idle close instead of an answer (`raceAfterMs`). */
  raced: number;
  close(): Promise<void>;
}

const chunk = (model: string, content: string): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

export function completion(model: string, content = 'hello from the mock') {
  return {
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

export interface MockOptions {
  idleCloseMs?: number;
  raceAfterMs?: number;
}

export async function startMockUpstream(options: MockOptions = {}): Promise<MockUpstream> {
  const received: Received[] = [];
  const waiters: ((r: Received) => void)[] = [];
  let gate: { open: Promise<void>; release: () => void } = makeGate();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      let json: Record<string, unknown> | null;
      let form: FormData | undefined;
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        json = null;
      }
      if (/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
        // An upload, read as the real servers' frameworks do; its text fields stand in for the JSON body.
        form = await new Response(bytes, { headers: { 'content-type': req.headers['content-type']! } }).formData().catch(() => undefined);
        json = form === undefined ? null : Object.fromEntries([...form].filter(([, v]) => typeof v === 'string'));
        if (json !== null && json.stream !== undefined) json.stream = json.stream === 'true';
      }
      const ended = new Promise<'finished' | 'client_closed'>((resolve) => {
        res.on('close', () => resolve(res.writableFinished ? 'finished' : 'client_closed'));
      });
      const record: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, bytes, json, form, ended };
      received.push(record);
      waiters.splice(0).forEach((w) => w(record));
      if (req.url?.split('?')[0]?.endsWith('/models')) return models(res);
      if (answerFormat(req.url ?? '', String(json?.model ?? ''), json, res)) return;
      answer(String(json?.model ?? ''), req, res);
    });
  });
  if (options.idleCloseMs !== undefined || options.raceAfterMs !== undefined) closeIdle(server, options, () => mock.raced++);

  const mock: MockUpstream = {
    port: 0,
    baseUrl: '',
    received,
    models: [{ id: 'llama3:8b', owned_by: 'mock' }, { id: 'qwen2' }],
    modelsCalls: 0,
    raced: 0,
    request(index) {
      const r = received[index];
      if (r) return Promise.resolve(r);
      return new Promise((resolve) => {
        const check = (): void => {
          const got = received[index];
          if (got) resolve(got);
          else waiters.push(check);
        };
        waiters.push(check);
      });
    },
    release() {
      gate.release();
      gate = makeGate();
    },
    close() {
      for (const t of timers) clearTimeout(t);
      gate.release();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  function models(res: http.ServerResponse): void {
    mock.modelsCalls++;
    if (mock.models === 'hang') return;
    const body = JSON.stringify({ object: 'list', data: mock.models.map((m) => ({ object: 'model', created: 2, ...m })) });
    const enc = mock.modelsEncoding;
    if (enc === undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(body);
    }
    const packed =
      enc === 'gzip' ? zlib.gzipSync(body) : enc === 'deflate' ? zlib.deflateSync(body) : enc === 'deflate-raw' ? zlib.deflateRawSync(body) : enc === 'br' ? zlib.brotliCompressSync(body) : Buffer.from(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': enc === 'deflate-raw' ? 'deflate' : enc });
    res.end(packed);
  }

  function json(res: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'upstream-id', 'x-mock': 'yes' });
    res.end(text);
  }

  function sseHead(res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  }

  function answer(model: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    const [kind, a, b] = model.split(':');
    switch (kind) {
      case 'slow':
        return later(Number(a), () => json(res, 200, completion(model)));
      case 'hang':
        return;
      case 'error':
        return json(res, Number(a), { error: { message: `mock error ${a}`, type: 'mock_error', param: null, code: 'mock_code' } });
      case 'echo-key':
        return json(res, Number(a), { error: { message: `Incorrect API key provided: ${String(req.headers.authorization)}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      case 'stream': {
        sseHead(res);
        const n = Number(a);
        const gap = Number(b);
        let i = 0;
        const next = (): void => {
          if (res.destroyed) return;
          if (i === n) {
            res.end('data: [DONE]\n\n');
            return;
          }
          res.write(chunk(model, `c${i++} `));
          later(gap, next);
        };
        return next();
      }
      case 'gated-stream':
        sseHead(res);
        res.write(chunk(model, 'first '));
        void gate.open.then(() => {
          if (res.destroyed) return;
          res.write(chunk(model, 'second'));
          res.end('data: [DONE]\n\n');
        });
        return;
      case 'gated-head':
        sseHead(res);
        res.flushHeaders();
        void gate.open.then(() => {
          if (res.destroyed) return;
          res.write(chunk(model, 'late'));
          res.end('data: [DONE]\n\n');
        });
        return;
      case 'stall-stream':
        sseHead(res);
        res.write(chunk(model, 'only '));
        return;
      case 'die-stream':
        sseHead(res);
        res.write(chunk(model, 'before dying '));
        return later(50, () => res.socket?.destroy());
      case 'cut-event': {
        sseHead(res);
        const whole = chunk(model, 'whole ');
        const next = chunk(model, 'never whole');
        res.write(whole + next.slice(0, 40));
        return later(50, () => res.socket?.destroy());
      }
      case 'split-events': {
        const eol = a === 'crlf' ? '\r\n' : a === 'cr' ? '\r' : '\n';
        sseHead(res);
        const text = ['one', 'two', 'three'].map((c) => chunk(model, c).replace('\n\n', '')).concat('data: [DONE]').map((e) => `${e}${eol}${eol}`).join('');
        let at = 0;
        const next = (): void => {
          if (res.destroyed) return;
          if (at >= text.length) return void res.end();
          res.write(text.slice(at, at + 7));
          at += 7;
          later(2, next);
        };
        return next();
      }
      case 'no-final-blank':
        sseHead(res);
        return void res.end(`${chunk(model, 'only ')}data: [DONE]\n`);
      case 'gz':
        return compressed(a as Encoding, b ?? 'json', model.split(':')[3], req, res);
      case 'error-head':
        // An error's head and the start of its body, then silence: only an abort ends it.
        res.writeHead(Number(a), { 'content-type': 'application/json' });
        res.write('{"error":');
        return;
      case 'json-stall':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"id":"chatcmpl-mock",');
        return;
      default:
        return json(res, 200, completion(model));
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mock.port = (server.address() as AddressInfo).port;
  mock.baseUrl = `http://127.0.0.1:${mock.port}/v1`;
  return mock;
}

type Encoding = 'gzip' | 'deflate' | 'br';

function compress(encoding: Encoding, data: string | Buffer): Buffer {
  if (encoding === 'gzip') return zlib.gzipSync(data);
  if (encoding === 'deflate') return zlib.deflateSync(data);
  return zlib.brotliCompressSync(data);
}

/** A compressor whose output is flushed after every write, as a streaming server's would be. */
function flushing(encoding: Encoding): zlib.Gzip | zlib.Deflate | zlib.BrotliCompress {
  if (encoding === 'gzip') return zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH });
  if (encoding === 'deflate') return zlib.createDeflate({ flush: zlib.constants.Z_SYNC_FLUSH });
  return zlib.createBrotliCompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH });
}

function compressed(encoding: Encoding, kind: string, status: string | undefined, req: http.IncomingMessage, res: http.ServerResponse): void {
  const model = `gz:${encoding}:${kind}`;
  if (kind === 'corrupt') {
    // Labelled compressed, but not: what a broken middlebox might send.
    res.writeHead(500, { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': 20 });
    return void res.end('not compressed at all');
  }
  if (kind === 'json' || kind === 'key') {
    const body =
      kind === 'json'
        ? JSON.stringify(completion(model))
        : JSON.stringify({ error: { message: `Incorrect API key provided: ${String(req.headers.authorization)}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    const bytes = compress(encoding, body);
    res.writeHead(kind === 'json' ? 200 : Number(status), { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': bytes.length });
    return void res.end(bytes);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': encoding });
  const z = flushing(encoding);
  z.on('data', (d: Buffer) => res.write(d));
  if (kind === 'stream') {
    z.on('end', () => res.end());
    for (const c of ['one ', 'two ', 'three']) z.write(chunk(model, c));
    return void z.end('data: [DONE]\n\n');
  }
  // cut: a whole event, half of the next, then the connection dies.
  // Cut as soon as the compressed bytes are out (the compressor answers asynchronously):
  // the end then reaches the proxy while its decoder, off the main thread too, may
  // still hold the whole event, which must go out before the error event.
  z.write(chunk(model, 'whole ') + chunk(model, 'never whole').slice(0, 40), () => setImmediate(() => res.socket?.destroy()));
}

/**
 * uvicorn's keep-alive handling: after an answer, a timer; when it fires, the
 * connection is closed with no word said in the answer's headers. Returns how many
 * requests met the close (`raceAfterMs`).
 */
function closeIdle(server: http.Server, options: MockOptions, onRaced: () => void): void {
  // No Node keep-alive timer, and so no `Keep-Alive: timeout=` header (uvicorn sends none).
  server.keepAliveTimeout = 0;
  const idle = new WeakMap<net.Socket, { since: number; timer: NodeJS.Timeout | null }>();
  server.on('connection', (socket: net.Socket) => socket.on('close', () => clearTimeout(idle.get(socket)?.timer ?? undefined)));
  // Registered after the answering handler: a raced request has been seen (and may be recorded) but gets no answer.
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    const was = idle.get(socket);
    idle.delete(socket);
    if (was !== undefined) {
      clearTimeout(was.timer ?? undefined);
      if (options.raceAfterMs !== undefined && Date.now() - was.since >= options.raceAfterMs) {
        onRaced();
        socket.destroy();
        return;
      }
    }
    res.on('finish', () => {
      const timer = options.idleCloseMs === undefined ? null : setTimeout(() => socket.end(), options.idleCloseMs);
      idle.set(socket, { since: Date.now(), timer });
    });
  });
}

function makeGate(): { open: Promise<void>; release: () => void } {
  let release = (): void => {};
  const open = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { open, release };
}

/** A port on loopback where nothing listens (bound, then released). */
export async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
