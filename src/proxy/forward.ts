import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sseErrorEvent, timeoutError, type ErrorFamily, type ProxyError } from './errors.js';
import type { Provider } from './providers.js';
import { clientHeaders } from './response-headers.js';
import type { UpstreamFailure, UpstreamPool } from './upstream.js';

/** Why a provider could not serve a request, seen before anything reached the client. */
export type FallbackReason =
  | { kind: 'unreachable'; code: string }
  | { kind: 'timeout' }
  /** It answered 429 or 5xx. */
  | { kind: 'status'; status: number; rawHeaders: readonly string[] };

/** Everything one proxied request needs. */
export interface Forward {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  provider: Provider;
  pool: UpstreamPool;
  /** The request body as the upstream gets it (bare model name). */
  payload: Buffer;
  /** The upstream path, e.g. `/v1/chat/completions`. */
  path: string;
  /** Whose error shape the client reads (the endpoint's). */
  family?: ErrorFamily;
  /**
   * Asked while nothing has reached the client yet and this provider cannot serve
   * the request. True: the caller takes the request elsewhere and this exchange is
   * dropped without a word to the client; false: the error is answered as usual.
   */
  fallback?(why: FallbackReason): boolean;
  /** Each piece of the answer's body as it goes to the client, unchanged (usage, time to first byte). */
  tap?(chunk: Buffer): void;
  /** "; 127.0.0.1:11434 is the local end of tunnel 'llm' (…), which is RETRYING, not RUNNING" or "": appended to 502 messages. */
  tunnelHint(): string;
  log?(entry: Record<string, unknown>): void;
}

// Error bodies are buffered (to scrub the upstream key from them) only up to this size.
const MAX_SCRUBBED_ERROR_BYTES = 1024 * 1024;

/**
 * Relays one chat request to its provider and the answer back, as it arrives.
 *
 *   waiting ──upstream head──▶ relaying ──upstream end──▶ done
 *     │ timeout ▶ 504            │ gap timeout, upstream died ▶ final SSE error event
 *     │ unreachable ▶ 502        │   (or a cut connection when the body is not SSE)
 *     └──────── client closed (any state) ▶ upstream exchange aborted ▶ done
 *
 * One timer serves both timeouts: armed when the request leaves, refreshed by the
 * head and by every chunk, so a stream that keeps flowing is never cut.
 */
export function forwardChat(f: Forward): void {
  const { req, res, requestId, provider } = f;
  let state: 'waiting' | 'relaying' | 'done' = 'waiting';
  let eventStream = false;
  let atEventBoundary = true;
  let clientBlocked = false;
  // Whether a body byte went to the client (the head goes with the first one).
  let wrote = false;
  // An error answer held back until complete, so that the upstream key can be blanked out of it.
  let held: { status: number; rawHeaders: string[]; chunks: Buffer[]; size: number } | null = null;
  const started = Date.now();

  const timer = setTimeout(onTimeout, provider.timeoutMs);
  res.on('close', onClientClose);
  const exchange = f.pool.request(
    provider.origin,
    { method: 'POST', path: f.path, headers: requestHeaders(req, requestId, provider), body: f.payload },
    { head: onHead, data: onData, end: onEnd, fail: onFail },
  );

  function finish(): void {
    state = 'done';
    clearTimeout(timer);
  }

  function onHead(status: number, rawHeaders: string[]): void {
    if ((status === 429 || status >= 500) && f.fallback?.({ kind: 'status', status, rawHeaders })) {
      finish();
      exchange.abort();
      return;
    }
    state = 'relaying';
    timer.refresh();
    if (status >= 400 && provider.key.ok && provider.key.value !== null) {
      held = { status, rawHeaders, chunks: [], size: 0 };
      return;
    }
    eventStream = isEventStream(rawHeaders);
    res.writeHead(status, clientHeaders(rawHeaders, requestId));
    // The client learns the stream has begun even if the first event is slow. Not at
    // once: the first event often came in the same read, and then goes out with the
    // head in one write.
    if (eventStream) queueMicrotask(() => wrote || state !== 'relaying' || res.flushHeaders());
  }

  function onData(chunk: Buffer): void {
    timer.refresh();
    if (held !== null) {
      held.size += chunk.length;
      if (held.size <= MAX_SCRUBBED_ERROR_BYTES) held.chunks.push(chunk);
      return;
    }
    if (eventStream) atEventBoundary = chunk.length >= 2 && chunk[chunk.length - 1] === 10 && chunk[chunk.length - 2] === 10;
    wrote = true;
    f.tap?.(chunk);
    if (!res.write(chunk) && !clientBlocked) {
      // A slow reader is not an upstream gap: stop reading (TCP pushes back on the
      // upstream) and let the timer ignore the pause.
      clientBlocked = true;
      exchange.pause();
      res.once('drain', () => {
        clientBlocked = false;
        timer.refresh();
        exchange.resume();
      });
    }
  }

  function onEnd(): void {
    if (state !== 'relaying') return;
    finish();
    if (held === null) {
      res.end();
      return;
    }
    // The error body may quote our key back (some APIs echo the header they rejected).
    const key = provider.key.ok ? provider.key.value : null;
    let body = Buffer.concat(held.chunks);
    if (key !== null && held.size <= MAX_SCRUBBED_ERROR_BYTES && body.includes(key)) body = Buffer.from(body.toString('utf8').replaceAll(key, '***'));
    res.writeHead(held.status, [...clientHeaders(held.rawHeaders, requestId, true), 'content-length', String(body.length)]);
    f.tap?.(body);
    res.end(body);
  }

  function onFail(failure: UpstreamFailure): void {
    if (state === 'relaying') {
      failMidway({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${provider.prefix}" closed the connection before its response was complete` });
      return;
    }
    if (state !== 'waiting') return;
    finish();
    f.log?.({ event: 'proxy_upstream_error', request_id: requestId, provider: provider.prefix, error: failure.code, ms: Date.now() - started });
    if (f.fallback?.({ kind: 'unreachable', code: failure.code })) return;
    const where = `${provider.hostname}:${provider.port}`;
    const message =
      failure.code === 'EOF' || failure.code === 'EPROTO'
        ? `provider "${provider.prefix}" at ${where} gave no usable answer: ${failure.message}${f.tunnelHint()}`
        : `provider "${provider.prefix}" is unreachable at ${where}: ${failure.code}${f.tunnelHint()}`;
    sendError(res, requestId, { status: 502, type: 'upstream_error', code: 'upstream_unreachable', message }, false, f.family);
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
      exchange.abort();
      if (f.fallback?.({ kind: 'timeout' })) return;
      sendError(res, requestId, e, false, f.family);
    } else {
      failMidway(e);
    }
  }

  /** After the status line went out, an error can only be a last SSE event; anything else is cut short. */
  function failMidway(e: ProxyError): void {
    finish();
    exchange.abort();
    if (held !== null) {
      // Nothing reached the client yet: it can still get a whole error answer.
      sendError(res, requestId, e, false, f.family);
    } else if (!eventStream) {
      res.destroy();
    } else {
      res.end((atEventBoundary ? '' : '\n\n') + sseErrorEvent(e, f.family));
    }
  }

  function onClientClose(): void {
    if (state === 'done') return;
    const stage = state;
    finish();
    exchange.abort();
    f.log?.({ event: 'proxy_client_closed', request_id: requestId, provider: provider.prefix, stage, ms: Date.now() - started });
  }
}

/** The headers the upstream gets: our own, the key, and two harmless ones of the client's. */
function requestHeaders(req: IncomingMessage, requestId: string, provider: Provider): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: headerValue(req.headers.accept) ?? 'application/json',
    'x-request-id': requestId,
  };
  const agent = headerValue(req.headers['user-agent']);
  if (agent !== undefined) headers['user-agent'] = agent;
  if (provider.credential !== null) headers[provider.credential.name] = provider.credential.value;
  return headers;
}

/** A client header value fit to copy into our request head (Node's parser already refuses line breaks; this holds without it). */
function headerValue(value: string | undefined): string | undefined {
  return value === undefined || /[\r\n]/.test(value) ? undefined : value;
}

function isEventStream(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === 12 && rawHeaders[i]!.toLowerCase() === 'content-type') return /^\s*text\/event-stream/i.test(rawHeaders[i + 1]!);
  }
  return false;
}
