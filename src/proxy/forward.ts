import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse, ClientRequest } from 'node:http';
import { sendError, sseErrorEvent, timeoutError, type ProxyError } from './errors.js';
import type { Provider } from './providers.js';
import { clientHeaders } from './response-headers.js';

/** Everything one proxied chat request needs. */
export interface Forward {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  provider: Provider;
  /** The request body as the upstream gets it (bare model name). */
  payload: Buffer;
  /** "; provider … is reached through tunnel 'llm' (…), which is RETRYING, not RUNNING" or "": appended to 502 messages. */
  tunnelHint(): string;
  log?(entry: Record<string, unknown>): void;
}

// Error bodies are buffered (to scrub the upstream key from them) only up to this size.
const MAX_SCRUBBED_ERROR_BYTES = 1024 * 1024;

/**
 * Relays one chat request to its provider and the answer back, as it arrives.
 *
 *   waiting ──upstream headers──▶ relaying ──upstream end──▶ done
 *     │ timeout ▶ 504               │ gap timeout, upstream died ▶ final SSE error event
 *     │ unreachable ▶ 502           │   (or a cut connection when the body is not SSE)
 *     └──────── client closed (any state) ▶ upstream request destroyed ▶ done
 *
 * One timer serves both timeouts: armed when the request leaves, refreshed by the
 * headers and by every chunk, so a stream that keeps flowing is never cut.
 */
export function forwardChat(f: Forward): void {
  const { req, res, requestId, provider } = f;
  let state: 'waiting' | 'relaying' | 'done' = 'waiting';
  let upstream: ClientRequest;
  let upstreamRes: IncomingMessage | null = null;
  let eventStream = false;
  let atEventBoundary = true;
  let clientBlocked = false;
  let retried = false;
  const started = Date.now();

  const headers: http.OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': f.payload.length,
    accept: req.headers.accept ?? 'application/json',
    'x-request-id': requestId,
  };
  if (provider.authorization.ok && provider.authorization.value !== null) headers.authorization = provider.authorization.value;
  const agent = req.headers['user-agent'];
  if (agent !== undefined) headers['user-agent'] = agent;

  const timer = setTimeout(onTimeout, provider.timeoutMs);
  res.on('close', onClientClose);
  send();

  function send(): void {
    const options = { ...provider.target, method: 'POST', path: `${provider.basePath}/chat/completions`, headers };
    upstream = provider.target.protocol === 'https:' ? https.request(options) : http.request(options);
    upstream.on('response', onResponse);
    upstream.on('error', onUpstreamError);
    upstream.end(f.payload);
  }

  function finish(): void {
    state = 'done';
    clearTimeout(timer);
  }

  function onResponse(up: IncomingMessage): void {
    if (state !== 'waiting') {
      up.destroy();
      return;
    }
    state = 'relaying';
    upstreamRes = up;
    timer.refresh();
    const status = up.statusCode ?? 502;
    const key = provider.authorization.ok && provider.authorization.value !== null ? provider.authorization.value.slice(7) : null;
    if (status >= 400 && key !== null) {
      relayScrubbed(up, status, key);
      return;
    }
    eventStream = /^text\/event-stream/i.test(up.headers['content-type'] ?? '');
    res.writeHead(status, clientHeaders(up.rawHeaders, requestId));
    // The client learns the stream has begun even if the first event is slow.
    if (eventStream) res.flushHeaders();
    up.on('data', onData);
    up.on('end', onEnd);
    up.on('error', () => {});
    up.on('close', () => {
      if (state === 'relaying' && !up.complete) failMidway({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${provider.prefix}" closed the connection before its response was complete` });
    });
  }

  function onData(chunk: Buffer): void {
    timer.refresh();
    if (eventStream) atEventBoundary = chunk.length >= 2 && chunk[chunk.length - 1] === 10 && chunk[chunk.length - 2] === 10;
    if (!res.write(chunk)) {
      // A slow reader is not an upstream gap: stop reading (TCP pushes back on the
      // upstream) and let the timer ignore the pause.
      clientBlocked = true;
      upstreamRes?.pause();
      res.once('drain', () => {
        clientBlocked = false;
        timer.refresh();
        upstreamRes?.resume();
      });
    }
  }

  function onEnd(): void {
    if (state !== 'relaying') return;
    finish();
    res.end();
  }

  /** An upstream error status whose body may quote our key back: buffer it (bounded) and blank the key out. */
  function relayScrubbed(up: IncomingMessage, status: number, key: string): void {
    const chunks: Buffer[] = [];
    let size = 0;
    up.on('data', (chunk: Buffer) => {
      timer.refresh();
      size += chunk.length;
      if (size <= MAX_SCRUBBED_ERROR_BYTES) chunks.push(chunk);
    });
    up.on('error', () => {});
    up.on('close', () => {
      if (state !== 'relaying') return;
      finish();
      let body = Buffer.concat(chunks);
      if (size <= MAX_SCRUBBED_ERROR_BYTES && body.includes(key)) body = Buffer.from(body.toString('utf8').replaceAll(key, '***'));
      res.writeHead(status, [...clientHeaders(up.rawHeaders, requestId, true), 'content-length', String(body.length)]);
      res.end(body);
    });
  }

  function onUpstreamError(e: NodeJS.ErrnoException): void {
    if (state !== 'waiting') return;
    // A keep-alive socket the upstream closed while idle fails at once; the request
    // never reached it, so one fresh try is safe (Node's documented pattern).
    if (upstream.reusedSocket && !retried && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
      retried = true;
      send();
      return;
    }
    finish();
    const where = `${provider.hostname}:${provider.port}`;
    const message = `provider "${provider.prefix}" is unreachable at ${where}: ${e.code ?? e.message}${f.tunnelHint()}`;
    f.log?.({ event: 'proxy_upstream_error', request_id: requestId, provider: provider.prefix, error: e.code ?? e.message, ms: Date.now() - started });
    sendError(res, requestId, { status: 502, type: 'upstream_error', code: 'upstream_unreachable', message });
  }

  function onTimeout(): void {
    if (state === 'done') return;
    if (clientBlocked) {
      timer.refresh();
      return;
    }
    const stage = state === 'waiting' ? 'headers' : 'chunk';
    f.log?.({ event: 'proxy_upstream_timeout', request_id: requestId, provider: provider.prefix, stage, timeout_s: provider.timeoutSeconds });
    const e = timeoutError(provider.prefix, provider.timeoutSeconds, stage);
    if (state === 'waiting') {
      finish();
      upstream.destroy();
      sendError(res, requestId, e);
    } else {
      failMidway(e);
    }
  }

  /** After the status line went out, an error can only be a last SSE event; anything else is cut short. */
  function failMidway(e: ProxyError): void {
    finish();
    upstream.destroy();
    if (!eventStream) {
      res.destroy();
      return;
    }
    res.end((atEventBoundary ? '' : '\n\n') + sseErrorEvent(e));
  }

  function onClientClose(): void {
    if (state === 'done') return;
    const stage = state;
    finish();
    upstream.destroy();
    f.log?.({ event: 'proxy_client_closed', request_id: requestId, provider: provider.prefix, stage, ms: Date.now() - started });
  }
}
