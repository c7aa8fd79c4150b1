import { unreachable } from '../../kernel/unreachable.js';
import { bodyEncoding } from '../request/body-encoding.js';
import { ownRateHeadersKept } from '../clients/gate.js';
import { sendError, sseErrorEvent, timeoutError, type ProxyError } from '../errors.js';
import { timingOf, type Timing } from '../observe/server-timing.js';
import { createBodyDecoder, type BodyDecoder } from './body-decoder.js';
import { clientHeaders, relayHeaders } from './client-headers.js';
import { GapTimer } from './gap-timer.js';
import { HeldError } from './held-error.js';
import { KeyScrubber, MIN_MASKED_KEY_LENGTH } from './key-scrub.js';
import { keyOf } from './provider.js';
import { next, type HeadVerdict, type RelayEffect, type RelayEvent } from './relay-stages.js';
import { RelaySignal, type RelayHearer } from './relay-signal.js';
import type { RelayRequest, Settled } from './relay-request.js';
import { createSseFrames, eventTooLarge, isEventStream, streamTail, type SseFrames } from './sse-frames.js';
import { upstreamRequestHeaders } from './upstream-headers.js';
import { askingUsage, USAGE_ON_REQUEST } from './usage-request.js';
import { withoutUsage } from './usage-strip.js';
import type { Exchange, ExchangeSink, UpstreamFailure } from './upstream.js';

/**
 * Relays one request to its provider and the answer back, as it arrives; resolves
 * with how it settled (relay-request.ts) as soon as that is known, so that the caller
 * (route/fallback.ts) may take a declined request elsewhere. The stages and what each
 * event does to them are relay-stages.ts; this class performs the effects.
 *
 * While streaming, the body goes through up to three steps: a decoder when the
 * provider compressed it anyway, then either the SSE framer (only whole events reach
 * the client) or nothing; the answer of a provider with a key is scrubbed of the key
 * as it passes. An error answer while a key is in use is held (HeldError) and scrubbed
 * once complete.
 *
 * The record reads the usage from the provider's bytes as they come (before anything
 * is left out). For a client with `tpm` a chat or completions stream is asked for its
 * usage (usage-request.ts), and when the client did not ask, the events pass without
 * it (usage-strip.ts): that is the only per-event work, and only for such a client.
 */
export function startRelay(r: RelayRequest): Promise<Settled> {
  return new Promise((resolve) => new Relay(r, resolve));
}

/** How a streamed body is passed on, chosen by its head. */
class Passing {
  // Whether a body byte went to the client (the head goes with the first one).
  wrote = false;
  // Plain body bytes seen, to know a passed-on body's last piece (with `whole`).
  received = 0;

  constructor(
    /** SSE framing: whole events only, and the proxy may end the stream with its error event. Null: the body passes as it comes. */
    readonly frames: SseFrames | null,
    /**
     * The upstream's Content-Length when it still describes what the client gets (else
     * -1): the same bytes, or the same length with the key masked. A body that arrives
     * whole in one piece leaves with the head in one `end`.
     */
    readonly whole: number,
    /** The key masked as the body passes (a provider with a key of MIN_MASKED_KEY_LENGTH or more). */
    readonly scrubber: KeyScrubber | null,
    /** The proxy asked for the usage the client did not: the events pass without it. */
    readonly unasked: boolean,
  ) {}
}

/** The relay's stage, with what each holds (the stages and their transitions: relay-stages.ts). */
type State = { id: 'waiting' } | { id: 'streaming'; passing: Passing } | { id: 'holding'; held: HeldError } | { id: 'done' };

/**
 * One relay. A class rather than a closure per step: it is itself the upstream
 * exchange's sink, so a request allocates one object here, not a dozen functions.
 */
class Relay implements ExchangeSink, RelayHearer {
  private state: State = { id: 'waiting' };
  private decoder: BodyDecoder | null = null;
  private readonly started = Date.now();
  private readonly signal = RelaySignal.take(this);
  private readonly timer: GapTimer;
  private readonly exchange: Exchange;
  // The request's clock (observe/server-timing.ts), looked up once.
  private readonly timing: Timing | null;
  // The proxy asked the provider for the stream's usage on the client's behalf.
  private readonly askedUsage: boolean;

  constructor(
    private readonly r: RelayRequest,
    private readonly settled: (s: Settled) => void,
  ) {
    this.timer = new GapTimer(r.provider.timeoutMs, () => this.onTimeout());
    r.observer.watch(this);
    // The client's query goes along (Azure-style servers route on `?api-version=`).
    const url = r.req.url ?? '';
    const q = url.indexOf('?');
    this.timing = timingOf(r.res);
    let body = r.payload;
    if (r.observer.metered && body !== null) {
      const asking = USAGE_ON_REQUEST.has(r.endpoint ?? '/chat/completions') && r.contentType === undefined ? askingUsage(body) : null;
      if (asking !== null) body = asking;
      r.observer.sent(body.length);
    }
    this.askedUsage = body !== r.payload;
    this.timing?.waitStarted();
    this.exchange = r.pool.request(
      r.provider.origin,
      {
        method: r.method ?? 'POST',
        path: `${r.provider.basePath}${r.endpoint ?? '/chat/completions'}${q === -1 ? '' : url.slice(q)}`,
        headers: upstreamRequestHeaders(r.req, r.requestId, r.provider.credential, r.forwarded, r.payload === null ? null : r.contentType),
        body,
        keepAliveMs: r.provider.keepAliveMs,
      },
      this,
    );
  }

  /**
   * The machine's next stage for `event`; the effect is the caller's to perform. The
   * one way out: a relay that ends before its provider finished aborts its signal,
   * one that completes releases it (relay-signal.ts); either way `relayEnded` follows.
   */
  private step(event: RelayEvent): RelayEffect {
    const { stage, effect } = next(this.state, event, this.r.fallible);
    if (stage.id === 'done' && this.state.id !== 'done') {
      this.state = { id: 'done' };
      this.signal.end(effect);
    }
    return effect;
  }

  /** What the relay started ends with it: the timer; and, cancelled, the exchange (which closes that connection) and the decoder. */
  relayEnded(cancelled: boolean): void {
    this.timer.stop();
    if (!cancelled) return;
    this.exchange.abort();
    this.decoder?.destroy();
  }

  head(status: number, rawHeaders: string[]): void {
    const { r } = this;
    const { res, requestId, provider } = r;
    this.timing?.waitEnded();
    const { contentType, contentEncoding, contentLength } = relayHeaders(rawHeaders);
    const encoding = bodyEncoding(contentEncoding);
    const key = keyOf(provider);
    const keyedError = status >= 400 && key !== null;
    const verdict: HeadVerdict = keyedError ? (encoding.kind === 'opaque' ? 'refuse' : 'hold') : 'stream';
    const effect = this.step({ type: 'head', retryable: status === 429 || status >= 500, verdict });
    switch (effect) {
      case 'decline':
        return this.settled({ kind: 'declined', why: { kind: 'status', status, rawHeaders } });
      case 'error_answer':
        // It cannot be searched for the key, so it is not passed on.
        this.settled({ kind: 'answered', status, rawHeaders });
        return sendError(res, requestId, { status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${provider.prefix}" answered ${status} with a body in content-encoding "${encoding.kind === 'opaque' ? encoding.name : contentEncoding}", which the proxy cannot check for its key` }, false, r.family);
      case 'hold':
      case 'pass_head':
        break;
      case 'complete':
      case 'error_event':
      case 'cancel':
      case 'ignore':
        return;
      default:
        return unreachable(effect, 'relay effect');
    }
    this.settled({ kind: 'answered', status, rawHeaders });
    this.timer.alive();
    if (encoding.kind === 'decodable') {
      this.decoder = createBodyDecoder(encoding.name, { data: (c) => this.onPlain(c), end: () => this.onPlainEnd(), error: (m) => this.onUndecodable(m) });
    }
    if (effect === 'hold') {
      this.state = { id: 'holding', held: new HeldError(status, rawHeaders) };
      return;
    }
    const appendable = encoding.kind !== 'opaque' && contentType !== undefined && isEventStream(contentType);
    // Outside errors, a short key is a placeholder that answers may contain as a word.
    const masked = key !== null && key.length >= MIN_MASKED_KEY_LENGTH ? key : null;
    const passing = new Passing(
      appendable ? createSseFrames() : null,
      !appendable && this.decoder === null && contentLength !== undefined ? Number(contentLength) : -1,
      masked === null ? null : new KeyScrubber(masked),
      appendable && this.askedUsage,
    );
    this.state = { id: 'streaming', passing };
    // An event stream may lose a half event or gain the proxy's error event: the upstream's length no longer holds.
    const headers = ownRateHeadersKept(res, clientHeaders(rawHeaders, requestId, this.decoder !== null || appendable, masked));
    const timing = this.timing?.header() ?? null;
    if (timing !== null) headers.push('server-timing', timing);
    res.writeHead(status, headers);
    // The client learns the stream has begun even if the first event is slow. Not at
    // once: the first event often came in the same read, and then goes out with the
    // head in one write.
    if (appendable) queueMicrotask(() => passing.wrote || this.state.id !== 'streaming' || res.flushHeaders());
  }

  data(chunk: Buffer): void {
    this.timer.alive();
    if (this.decoder !== null) this.decoder.write(chunk);
    else this.onPlain(chunk);
  }

  /** A piece of the body as plain (decoded) bytes; an event grown too large to hold ends the answer. */
  private onPlain(chunk: Buffer): void {
    this.pass(chunk);
    const { state } = this;
    if (state.id === 'streaming' && state.passing.frames?.overflowed() === true) this.broken(eventTooLarge(this.r.provider.prefix));
  }

  private pass(chunk: Buffer): void {
    const { state } = this;
    if (state.id === 'holding') return state.held.push(chunk);
    if (state.id !== 'streaming') return;
    const { passing } = state;
    this.r.observer.read(chunk);
    let out = passing.frames === null ? chunk : passing.frames.push(chunk);
    if (out === null) return;
    if (passing.unasked) {
      out = withoutUsage(out);
      if (out.length === 0) return;
    }
    if (passing.scrubber !== null) {
      // Whole events hold whole keys; a passed-on body may split one between pieces.
      passing.received += chunk.length;
      out = passing.scrubber.push(out, passing.frames !== null || passing.received === passing.whole);
      if (out.length === 0) return;
    }
    this.r.observer.tap(out);
    if (!passing.wrote && out.length === passing.whole) {
      // The whole answer in one piece: it is complete, whatever undici says next.
      passing.wrote = true;
      if (this.step({ type: 'end' }) === 'complete') this.r.res.end(out);
      return;
    }
    passing.wrote = true;
    this.timer.write(this.r.res, out, this.exchange);
  }

  end(): void {
    if (this.state.id !== 'streaming' && this.state.id !== 'holding') return;
    if (this.decoder !== null) this.decoder.end();
    else this.onPlainEnd();
  }

  private onPlainEnd(): void {
    const { state, r } = this;
    if (state.id === 'streaming') {
      const tail = streamTail(state.passing.frames?.rest() ?? null);
      if (tail.kind === 'cut') {
        return this.broken({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${r.provider.prefix}" ended its stream in the middle of an event` });
      }
      if (this.step({ type: 'end' }) !== 'complete') return;
      // What the scrubber held back, then the completed last event (scrubbed too).
      const { scrubber, unasked } = state.passing;
      const heldBack = scrubber?.flush() ?? null;
      const whole = tail.kind === 'complete' ? (unasked ? withoutUsage(tail.bytes) : tail.bytes) : null;
      let last = whole === null || whole.length === 0 ? null : (scrubber?.push(whole, true) ?? whole);
      if (heldBack !== null) last = last === null ? heldBack : Buffer.concat([heldBack, last]);
      if (last !== null) r.observer.tap(last);
      r.res.end(last ?? undefined);
      return;
    }
    if (state.id !== 'holding' || this.step({ type: 'end' }) !== 'complete') return;
    const { held } = state;
    const key = keyOf(r.provider);
    const body = held.scrubbed(key);
    const headers = [...ownRateHeadersKept(r.res, clientHeaders(held.rawHeaders, r.requestId, true, key)), 'content-length', String(body.length)];
    const timing = this.timing?.header() ?? null;
    if (timing !== null) headers.push('server-timing', timing);
    r.res.writeHead(held.status, headers);
    r.observer.tap(body);
    r.res.end(body);
  }

  private onUndecodable(message: string): void {
    this.broken({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${this.r.provider.prefix}": ${message}` });
  }

  fail(failure: UpstreamFailure): void {
    const { r } = this;
    const { provider } = r;
    if (this.state.id !== 'waiting') {
      const broke = (): void => this.broken({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${provider.prefix}" closed the connection before its response was complete` });
      // What the decoder still holds of the body goes out first (the whole events in it).
      return this.decoder === null ? broke() : this.decoder.settle(broke);
    }
    const effect = this.step({ type: 'unreachable' });
    if (effect !== 'decline' && effect !== 'error_answer') return;
    this.timing?.waitEnded();
    r.log?.({ event: 'proxy_upstream_error', request_id: r.requestId, provider: provider.prefix, error: failure.code, ms: Date.now() - this.started });
    if (effect === 'decline') return this.settled({ kind: 'declined', why: { kind: 'unreachable', code: failure.code } });
    this.settled({ kind: 'ended' });
    const where = `${provider.hostname}:${provider.port}`;
    const message =
      failure.code === 'EOF' || failure.code === 'EPROTO'
        ? `provider "${provider.prefix}" at ${where} gave no usable answer: ${failure.message}${r.tunnelHint()}`
        : `provider "${provider.prefix}" is unreachable at ${where}: ${failure.code}${r.tunnelHint()}`;
    sendError(r.res, r.requestId, { status: 502, type: 'upstream_error', code: 'upstream_unreachable', message }, false, r.family);
  }

  private onTimeout(): void {
    const { r } = this;
    const { provider } = r;
    const waiting = this.state.id === 'waiting';
    const stage = waiting ? 'headers' : 'chunk';
    const e = timeoutError(provider.prefix, provider.timeoutSeconds, stage);
    if (!waiting) return this.broken(e, { type: 'timeout' }, () => this.logTimeout(stage));
    const effect = this.step({ type: 'timeout' });
    if (effect !== 'decline' && effect !== 'error_answer') return;
    this.logTimeout(stage);
    this.timing?.waitEnded();
    if (effect === 'decline') return this.settled({ kind: 'declined', why: { kind: 'timeout' } });
    this.settled({ kind: 'ended' });
    sendError(r.res, r.requestId, e, false, r.family);
  }

  private logTimeout(stage: 'headers' | 'chunk'): void {
    const { r } = this;
    r.log?.({ event: 'proxy_upstream_timeout', request_id: r.requestId, provider: r.provider.prefix, stage, timeout_s: r.provider.timeoutSeconds });
  }

  /**
   * The answer began and cannot complete. After the status line went out, an error can
   * only be a last SSE event (after the last whole event: a partial one is dropped);
   * any other body is cut short, so it cannot pass for complete. A held answer had
   * nothing out yet: the client gets a whole error answer instead.
   */
  private broken(e: ProxyError, event: RelayEvent = { type: 'broken' }, before?: () => void): void {
    const { state, r } = this;
    const effect = this.step(event);
    if (effect !== 'error_event' && effect !== 'error_answer') return;
    before?.();
    if (state.id === 'holding' || effect === 'error_answer') return sendError(r.res, r.requestId, e, false, r.family);
    if (state.id !== 'streaming') return;
    // What it held back may be the start of the key, cut off: it goes.
    state.passing.scrubber?.flush();
    r.observer.cut();
    if (state.passing.frames === null) r.res.destroy();
    else r.res.end(sseErrorEvent(e, r.family));
  }

  onClientClose(): void {
    const stage = this.state.id;
    if (this.step({ type: 'client_closed' }) !== 'cancel') return;
    if (stage === 'waiting') this.settled({ kind: 'ended' });
    const { r } = this;
    r.log?.({ event: 'proxy_client_closed', request_id: r.requestId, provider: r.provider.prefix, stage: stage === 'waiting' ? 'waiting' : 'relaying', ms: Date.now() - this.started });
  }
}
