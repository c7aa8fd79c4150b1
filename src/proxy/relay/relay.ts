import { createBodyDecoder, type BodyDecoder } from './body-decoder.js';
import { bodyEncoding } from '../request/body-encoding.js';
import { sendError, sseErrorEvent, timeoutError, type ProxyError } from '../errors.js';
import type { RelayRequest } from './relay-request.js';
import { HeldError } from './held-error.js';
import { KeyScrubber, MIN_MASKED_KEY_LENGTH } from './key-scrub.js';
import { keyOf } from './provider.js';
import { upstreamRequestHeaders } from './upstream-headers.js';
import { clientHeaders, relayHeaders } from './client-headers.js';
import { ownRateHeadersKept } from '../clients/gate.js';
import { serverTiming, upstreamWaitEnded, upstreamWaitStarted } from '../observe/server-timing.js';
import { createSseFrames, streamTail, type SseFrames } from './sse-frames.js';
import type { Exchange, ExchangeSink, UpstreamFailure } from './upstream.js';

/**
 * Relays one request to its provider and the answer back, as it arrives.
 *
 *   waiting ──upstream head──▶ relaying ──upstream end──▶ done
 *     │ timeout ▶ 504            │ gap timeout, upstream died ▶ final SSE error event
 *     │ unreachable ▶ 502        │   (or a cut connection when the body is not SSE)
 *     └──────── client closed (any state) ▶ upstream exchange aborted ▶ done
 *
 * One timer serves both timeouts: armed when the request leaves; the head and every
 * chunk note the time, and a timer that fires after such a note is armed again for
 * what is left, so a stream that keeps flowing is never cut (and a chunk costs a
 * clock read rather than a timer update).
 *
 * While relaying, the body goes through up to three steps: a decoder when the
 * provider compressed it anyway, then either the SSE framer (only whole events reach
 * the client) or, for an error answer while a key is in use, a buffer that is
 * scrubbed of the key once complete; any other answer of a provider with a key is
 * scrubbed as it passes.
 */
export function startRelay(f: RelayRequest): void {
  new Relay(f).start();
}

/**
 * The state of one relay. A class rather than a closure per step: it is itself the
 * upstream exchange's sink, so a request allocates one object here, not a dozen
 * functions.
 */
export class Relay implements ExchangeSink {
  private state: 'waiting' | 'relaying' | 'done' = 'waiting';
  // Set by the head: SSE framing (null: the body is passed on as it comes).
  private frames: SseFrames | null = null;
  // Whether the proxy may append its own text (an error event) to the body the client gets.
  private appendable = false;
  private decoder: BodyDecoder | null = null;
  private clientBlocked = false;
  // Whether a body byte went to the client (the head goes with the first one).
  private wrote = false;
  // The upstream's Content-Length when it still describes what the client gets (else -1):
  // the same bytes, or the same length with the key masked. A body that arrives whole
  // in one piece leaves with the head in one `end`.
  private whole = -1;
  // An error answer held back until complete, so that the upstream key can be blanked out of it.
  private held: HeldError | null = null;
  // Any other answer of a provider with a key: the key masked as the body passes.
  private scrubber: KeyScrubber | null = null;
  // Plain body bytes seen, to know a passed-on body's last piece (with `whole`).
  private received = 0;
  private readonly started = Date.now();
  // The last sign of life from the upstream (or of a reader that was blocked), for the timer.
  private lastActivity = this.started;
  private timer: NodeJS.Timeout | null = null;
  private exchange: Exchange | null = null;

  constructor(private readonly f: RelayRequest) {}

  start(): void {
    const { f } = this;
    this.timer = setTimeout(() => this.onTimeout(), f.provider.timeoutMs);
    f.observer.watch(this);
    // The client's query goes along (Azure-style servers route on `?api-version=`).
    const url = f.req.url ?? '';
    const q = url.indexOf('?');
    upstreamWaitStarted(f.res);
    this.exchange = f.pool.request(
      f.provider.origin,
      {
        method: f.method ?? 'POST',
        path: `${f.provider.basePath}${f.endpoint ?? '/chat/completions'}${q === -1 ? '' : url.slice(q)}`,
        headers: upstreamRequestHeaders(f.req, f.requestId, f.provider.credential, f.forwarded, f.payload === null ? null : f.contentType),
        body: f.payload,
        keepAliveMs: f.provider.keepAliveMs,
      },
      this,
    );
  }

  private finish(): void {
    this.state = 'done';
    clearTimeout(this.timer!);
  }

  private abort(): void {
    this.exchange?.abort();
  }

  head(status: number, rawHeaders: string[]): void {
    const { f } = this;
    const { res, requestId, provider } = f;
    upstreamWaitEnded(res);
    if ((status === 429 || status >= 500) && f.fallback?.({ kind: 'status', status, rawHeaders })) {
      this.finish();
      this.abort();
      return;
    }
    this.state = 'relaying';
    this.lastActivity = Date.now();
    const { contentType, contentEncoding, contentLength } = relayHeaders(rawHeaders);
    const encoding = bodyEncoding(contentEncoding);
    if (encoding.kind === 'decodable') {
      this.decoder = createBodyDecoder(encoding.name, { data: (c) => this.onPlain(c), end: () => this.onPlainEnd(), error: (m) => this.onUndecodable(m) });
    }
    const key = keyOf(provider);
    if (status >= 400 && key !== null) {
      if (encoding.kind === 'opaque') {
        // It cannot be searched for the key, so it is not passed on.
        this.finish();
        this.abort();
        sendError(res, requestId, { status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${provider.prefix}" answered ${status} with a body in content-encoding "${encoding.name}", which the proxy cannot check for its key` }, false, f.family);
        return;
      }
      this.held = new HeldError(status, rawHeaders);
      return;
    }
    this.appendable = encoding.kind !== 'opaque' && contentType !== undefined && /^\s*text\/event-stream/i.test(contentType);
    if (this.appendable) this.frames = createSseFrames();
    else if (this.decoder === null && contentLength !== undefined) this.whole = Number(contentLength);
    // Outside errors, a short key is a placeholder that answers may contain as a word.
    const masked = key !== null && key.length >= MIN_MASKED_KEY_LENGTH ? key : null;
    if (masked !== null) this.scrubber = new KeyScrubber(masked);
    // An event stream may lose a half event or gain the proxy's error event: the upstream's length no longer holds.
    const headers = ownRateHeadersKept(res, clientHeaders(rawHeaders, requestId, this.decoder !== null || this.appendable, masked));
    const timing = serverTiming(res);
    if (timing !== null) headers.push('server-timing', timing);
    res.writeHead(status, headers);
    // The client learns the stream has begun even if the first event is slow. Not at
    // once: the first event often came in the same read, and then goes out with the
    // head in one write.
    if (this.appendable) queueMicrotask(() => this.wrote || this.state !== 'relaying' || res.flushHeaders());
  }

  data(chunk: Buffer): void {
    this.lastActivity = Date.now();
    if (this.decoder !== null) this.decoder.write(chunk);
    else this.onPlain(chunk);
  }

  /** A piece of the body as plain (decoded) bytes. */
  private onPlain(chunk: Buffer): void {
    if (this.state !== 'relaying') return;
    if (this.held !== null) return this.held.push(chunk);
    let out = this.frames === null ? chunk : this.frames.push(chunk);
    if (out === null) return;
    if (this.scrubber !== null) {
      // Whole events hold whole keys; a passed-on body may split one between pieces.
      this.received += chunk.length;
      out = this.scrubber.push(out, this.frames !== null || this.received === this.whole);
      if (out.length === 0) return;
    }
    this.write(out);
  }

  private write(out: Buffer): void {
    const { res } = this.f;
    this.f.observer.tap(out);
    if (!this.wrote && out.length === this.whole) {
      // The whole answer in one piece: it is complete, whatever undici says next.
      this.wrote = true;
      this.finish();
      res.end(out);
      return;
    }
    this.wrote = true;
    if (!res.write(out) && !this.clientBlocked) {
      // A slow reader is not an upstream gap: stop reading (TCP pushes back on the
      // upstream) and let the timer ignore the pause.
      this.clientBlocked = true;
      this.exchange!.pause();
      res.once('drain', () => {
        this.clientBlocked = false;
        this.lastActivity = Date.now();
        this.exchange!.resume();
      });
    }
  }

  end(): void {
    if (this.state !== 'relaying') return;
    if (this.decoder !== null) this.decoder.end();
    else this.onPlainEnd();
  }

  private onPlainEnd(): void {
    if (this.state !== 'relaying') return;
    const { f } = this;
    const { res, requestId, provider } = f;
    const held = this.held;
    if (held === null) {
      const tail = streamTail(this.frames?.rest() ?? null);
      if (tail.kind === 'cut') {
        this.failMidway({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${provider.prefix}" ended its stream in the middle of an event` });
        return;
      }
      this.finish();
      // What the scrubber held back, then the completed last event (scrubbed too).
      const heldBack = this.scrubber?.flush() ?? null;
      let last = tail.kind === 'complete' ? (this.scrubber?.push(tail.bytes, true) ?? tail.bytes) : null;
      if (heldBack !== null) last = last === null ? heldBack : Buffer.concat([heldBack, last]);
      if (last !== null) f.observer.tap(last);
      res.end(last ?? undefined);
      return;
    }
    this.finish();
    const key = keyOf(provider);
    const body = held.scrubbed(key);
    const headers = [...ownRateHeadersKept(res, clientHeaders(held.rawHeaders, requestId, true, key)), 'content-length', String(body.length)];
    const timing = serverTiming(res);
    if (timing !== null) headers.push('server-timing', timing);
    res.writeHead(held.status, headers);
    f.observer.tap(body);
    res.end(body);
  }

  private onUndecodable(message: string): void {
    if (this.state !== 'relaying') return;
    this.failMidway({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${this.f.provider.prefix}": ${message}` });
  }

  fail(failure: UpstreamFailure): void {
    const { f } = this;
    const { provider } = f;
    if (this.state === 'relaying') {
      this.failMidway({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${provider.prefix}" closed the connection before its response was complete` });
      return;
    }
    if (this.state !== 'waiting') return;
    this.finish();
    upstreamWaitEnded(f.res);
    f.log?.({ event: 'proxy_upstream_error', request_id: f.requestId, provider: provider.prefix, error: failure.code, ms: Date.now() - this.started });
    if (f.fallback?.({ kind: 'unreachable', code: failure.code })) return;
    const where = `${provider.hostname}:${provider.port}`;
    const message =
      failure.code === 'EOF' || failure.code === 'EPROTO'
        ? `provider "${provider.prefix}" at ${where} gave no usable answer: ${failure.message}${f.tunnelHint()}`
        : `provider "${provider.prefix}" is unreachable at ${where}: ${failure.code}${f.tunnelHint()}`;
    sendError(f.res, f.requestId, { status: 502, type: 'upstream_error', code: 'upstream_unreachable', message }, false, f.family);
  }

  private onTimeout(): void {
    if (this.state === 'done') return;
    const idle = Date.now() - this.lastActivity;
    if (this.clientBlocked || idle < this.f.provider.timeoutMs) {
      // A blocked reader is not an upstream gap; otherwise the upstream spoke since the timer was set.
      this.timer = setTimeout(() => this.onTimeout(), this.clientBlocked ? this.f.provider.timeoutMs : this.f.provider.timeoutMs - idle);
      return;
    }
    const { f } = this;
    const { provider } = f;
    const stage = this.state === 'waiting' ? 'headers' : 'chunk';
    f.log?.({ event: 'proxy_upstream_timeout', request_id: f.requestId, provider: provider.prefix, stage, timeout_s: provider.timeoutSeconds });
    const e = timeoutError(provider.prefix, provider.timeoutSeconds, stage);
    if (this.state === 'waiting') {
      this.finish();
      this.abort();
      upstreamWaitEnded(f.res);
      if (f.fallback?.({ kind: 'timeout' })) return;
      sendError(f.res, f.requestId, e, false, f.family);
    } else {
      this.failMidway(e);
    }
  }

  /**
   * After the status line went out, an error can only be a last SSE event (after the
   * last whole event: a partial one is dropped); any other body is cut short, so it
   * cannot pass for complete.
   */
  private failMidway(e: ProxyError): void {
    const { f } = this;
    this.finish();
    this.abort();
    this.decoder?.destroy();
    // What it held back may be the start of the key, cut off: it goes.
    this.scrubber?.flush();
    if (this.held !== null) {
      // Nothing reached the client yet: it gets a whole error answer, not a cut one.
      sendError(f.res, f.requestId, e, false, f.family);
      return;
    }
    f.observer.cut();
    if (!this.appendable) f.res.destroy();
    else f.res.end(sseErrorEvent(e, f.family));
  }

  onClientClose(): void {
    if (this.state === 'done') return;
    const stage = this.state;
    this.finish();
    this.abort();
    this.decoder?.destroy();
    const { f } = this;
    f.log?.({ event: 'proxy_client_closed', request_id: f.requestId, provider: f.provider.prefix, stage, ms: Date.now() - this.started });
  }
}
