import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyEncoding, createBodyDecoder, type BodyDecoder } from './body-decoder.js';
import { sendError, sseErrorEvent, timeoutError, type ErrorFamily, type ProxyError } from './errors.js';
import type { Provider } from './providers.js';
import { upstreamRequestHeaders } from './request-headers.js';
import { clientHeaders } from './response-headers.js';
import { createSseFrames, type SseFrames } from './sse-frames.js';
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
  /** The path under the provider's base URL; `/chat/completions` when absent. */
  endpoint?: string;
  /** `proxy.forward_headers`: client headers passed on beyond the built-in ones. */
  forwardHeaders?: readonly string[];
  /** Whose error shape the client reads (the endpoint's). */
  family?: ErrorFamily;
  /**
   * Asked while nothing has reached the client yet and this provider cannot serve
   * the request. True: the caller takes the request elsewhere and this exchange is
   * dropped without a word to the client; false: the error is answered as usual.
   */
  fallback?(why: FallbackReason): boolean;
  /** Told each piece of the answer's body as it goes to the client (usage, time to first byte). */
  observer?: { tap(chunk: Buffer): void };
  /** "; 127.0.0.1:11434 is the local end of tunnel 'llm' (…), which is RETRYING, not RUNNING" or "": appended to 502 messages. */
  tunnelHint(): string;
  log?(entry: Record<string, unknown>): void;
}

// Error bodies are buffered (to scrub the upstream key from them) only up to this size.
const MAX_SCRUBBED_ERROR_BYTES = 1024 * 1024;

/**
 * Relays one request to its provider and the answer back, as it arrives.
 *
 *   waiting ──upstream head──▶ relaying ──upstream end──▶ done
 *     │ timeout ▶ 504            │ gap timeout, upstream died ▶ final SSE error event
 *     │ unreachable ▶ 502        │   (or a cut connection when the body is not SSE)
 *     └──────── client closed (any state) ▶ upstream exchange aborted ▶ done
 *
 * One timer serves both timeouts: armed when the request leaves, refreshed by the
 * head and by every chunk, so a stream that keeps flowing is never cut.
 *
 * While relaying, the body goes through up to three steps: a decoder when the
 * provider compressed it anyway, then either the SSE framer (only whole events reach
 * the client) or, for an error answer while a key is in use, a buffer that is
 * scrubbed of the key once complete.
 */
export function forwardChat(f: Forward): void {
  const { req, res, requestId, provider } = f;
  let state: 'waiting' | 'relaying' | 'done' = 'waiting';
  // Set by the head: SSE framing (null: the body is passed on as it comes).
  let frames: SseFrames | null = null;
  // Whether the proxy may append its own text (an error event) to the body the client gets.
  let appendable = false;
  let decoder: BodyDecoder | null = null;
  let clientBlocked = false;
  // Whether a body byte went to the client (the head goes with the first one).
  let wrote = false;
  // An error answer held back until complete, so that the upstream key can be blanked out of it.
  let held: { status: number; rawHeaders: string[]; chunks: Buffer[]; size: number } | null = null;
  const started = Date.now();

  const timer = setTimeout(onTimeout, provider.timeoutMs);
  res.on('close', onClientClose);
  const forwardHeaders = f.forwardHeaders ?? [];
  const exchange = f.pool.request(
    provider.origin,
    {
      method: 'POST',
      path: `${provider.basePath}${f.endpoint ?? '/chat/completions'}`,
      headers: upstreamRequestHeaders(req, requestId, provider.credential, forwardHeaders),
      body: f.payload,
    },
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
    const { contentType, contentEncoding } = scan(rawHeaders);
    const encoding = bodyEncoding(contentEncoding);
    if (encoding.kind === 'decodable') decoder = createBodyDecoder(encoding.name, { data: onPlain, end: onPlainEnd, error: onUndecodable });
    if (status >= 400 && provider.key.ok && provider.key.value !== null) {
      if (encoding.kind === 'opaque') {
        // It cannot be searched for the key, so it is not passed on.
        finish();
        exchange.abort();
        sendError(res, requestId, { status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${provider.prefix}" answered ${status} with a body in content-encoding "${encoding.name}", which the proxy cannot check for its key` }, false, f.family);
        return;
      }
      held = { status, rawHeaders, chunks: [], size: 0 };
      return;
    }
    appendable = encoding.kind !== 'opaque' && contentType !== undefined && /^\s*text\/event-stream/i.test(contentType);
    if (appendable) frames = createSseFrames();
    res.writeHead(status, clientHeaders(rawHeaders, requestId, decoder !== null));
    // The client learns the stream has begun even if the first event is slow. Not at
    // once: the first event often came in the same read, and then goes out with the
    // head in one write.
    if (appendable) queueMicrotask(() => wrote || state !== 'relaying' || res.flushHeaders());
  }

  function onData(chunk: Buffer): void {
    timer.refresh();
    if (decoder !== null) decoder.write(chunk);
    else onPlain(chunk);
  }

  /** A piece of the body as plain (decoded) bytes. */
  function onPlain(chunk: Buffer): void {
    if (state !== 'relaying') return;
    if (held !== null) {
      held.size += chunk.length;
      if (held.size <= MAX_SCRUBBED_ERROR_BYTES) held.chunks.push(chunk);
      return;
    }
    const out = frames === null ? chunk : frames.push(chunk);
    if (out !== null) write(out);
  }

  function write(out: Buffer): void {
    wrote = true;
    f.observer?.tap(out);
    if (!res.write(out) && !clientBlocked) {
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
    if (decoder !== null) decoder.end();
    else onPlainEnd();
  }

  function onPlainEnd(): void {
    if (state !== 'relaying') return;
    finish();
    if (held === null) {
      // A provider that ends without a last blank line: its last bytes still reach the client as sent.
      const rest = frames?.rest() ?? null;
      if (rest !== null) f.observer?.tap(rest);
      res.end(rest ?? undefined);
      return;
    }
    // The error body may quote our key back (some APIs echo the header they rejected).
    const key = provider.key.ok ? provider.key.value : null;
    let body = Buffer.concat(held.chunks);
    if (key !== null && held.size <= MAX_SCRUBBED_ERROR_BYTES && body.includes(key)) body = Buffer.from(body.toString('utf8').replaceAll(key, '***'));
    res.writeHead(held.status, [...clientHeaders(held.rawHeaders, requestId, true), 'content-length', String(body.length)]);
    f.observer?.tap(body);
    res.end(body);
  }

  function onUndecodable(message: string): void {
    if (state !== 'relaying') return;
    failMidway({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${provider.prefix}": ${message}` });
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

  /**
   * After the status line went out, an error can only be a last SSE event (after the
   * last whole event: a partial one is dropped); any other body is cut short, so it
   * cannot pass for complete.
   */
  function failMidway(e: ProxyError): void {
    finish();
    exchange.abort();
    decoder?.destroy();
    if (held !== null) {
      // Nothing reached the client yet: it can still get a whole error answer.
      sendError(res, requestId, e, false, f.family);
    } else if (!appendable) {
      res.destroy();
    } else {
      res.end(sseErrorEvent(e, f.family));
    }
  }

  function onClientClose(): void {
    if (state === 'done') return;
    const stage = state;
    finish();
    exchange.abort();
    decoder?.destroy();
    f.log?.({ event: 'proxy_client_closed', request_id: requestId, provider: provider.prefix, stage, ms: Date.now() - started });
  }
}

/** The two response headers the relay depends on, in one pass over the raw list. */
function scan(rawHeaders: readonly string[]): { contentType: string | undefined; contentEncoding: string | undefined } {
  let contentType: string | undefined;
  let contentEncoding: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 12 && name.toLowerCase() === 'content-type') contentType = rawHeaders[i + 1];
    else if (name.length === 16 && name.toLowerCase() === 'content-encoding') contentEncoding = rawHeaders[i + 1];
  }
  return { contentType, contentEncoding };
}
