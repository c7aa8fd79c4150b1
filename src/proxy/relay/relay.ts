import { unreachable } from '../../kernel/unreachable.js';
import { bodyEncoding } from '../request/body-encoding.js';
import { sendError, timeoutError, undecodable, unreachableError, type ProxyError } from '../errors.js';
import { timingOf, type Timing } from '../observe/server-timing.js';
import type { AnswerBody, BodyTranslation } from './body-translation.js';
import { createBodyDecoder, type BodyDecoder } from './body-decoder.js';
import { passedHead, relayHeaders, translatedHead } from './client-headers.js';
import { GapTimer } from './gap-timer.js';
import { Holding } from './holding.js';
import { maskedKey } from './key-scrub.js';
import { Passing } from './passing.js';
import { keyOf } from './provider.js';
import { providerCall } from './provider-call.js';
import { headVerdict, next, type RelayEffect, type RelayEvent } from './relay-stages.js';
import { RelaySignal, type RelayHearer } from './relay-signal.js';
import type { RelayRequest, Settled } from './relay-request.js';
import { createSseFrames, eventTooLarge, isEventStream } from './sse-frames.js';
import type { Exchange, ExchangeSink, UpstreamFailure } from './upstream.js';

/**
 * Relays one request to its provider and the answer back, as it arrives; resolves
 * with how it settled (relay-request.ts) as soon as that is known, so that the caller
 * (route/fallback.ts) may take a declined request elsewhere. The stages and what each
 * event does to them are relay-stages.ts; this class performs the effects. `body` is
 * the answer's plug (body-translation.ts): IDENTITY, or a translation into the
 * client's format that translate/ provides.
 *
 * While streaming, the body goes through a decoder when the provider compressed it
 * anyway, then on its way to the client (passing.ts): framed into whole events, and
 * translated or passed with the key masked. An answer that is kept until complete
 * (holding.ts: an error while a key is in use; translated, all but a 2xx stream) is
 * scrubbed, or translated, whole.
 *
 * The record reads the usage from the provider's bytes as they come (before anything
 * is left out or translated). For a client with `tpm` a chat or completions stream is
 * asked for its usage (usage-request.ts), and when the client did not ask, the events
 * pass without it (usage-strip.ts): that is the only per-event work of an answer
 * passed as it came, and only for such a client.
 */
export function startRelay(r: RelayRequest, body: AnswerBody): Promise<Settled> {
  return new Promise((resolve) => new Relay(r, body.kind === 'identity' ? null : body, resolve));
}

/** The relay's stage, with what each holds (the stages and their transitions: relay-stages.ts). */
type State =
  | { id: 'waiting' }
  | { id: 'streaming'; passing: Passing }
  | { id: 'holding'; holding: Holding }
  | { id: 'done' };

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
    /** The answer's translation; null: it passes as it came. Looked at once per answer (its head), never per piece. */
    private readonly t: BodyTranslation | null,
    private readonly settled: (s: Settled) => void,
  ) {
    this.timer = new GapTimer(r.provider.timeoutMs, () => this.onTimeout());
    r.observer.watch(this);
    this.timing = timingOf(r.res);
    const call = providerCall(r, t);
    if (r.observer.metered && call.body !== null) r.observer.sent(call.body.length);
    this.askedUsage = call.body !== r.payload;
    this.timing?.waitStarted();
    this.exchange = r.pool.request(r.provider.origin, call, this);
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
    const { r, t } = this;
    const { res, requestId, provider } = r;
    this.timing?.waitEnded();
    const { contentType, contentEncoding, contentLength } = relayHeaders(rawHeaders);
    const encoding = bodyEncoding(contentEncoding);
    const opaque = encoding.kind === 'opaque';
    const sse = !opaque && contentType !== undefined && isEventStream(contentType);
    const key = keyOf(provider);
    const verdict = headVerdict(status, t !== null, key !== null, opaque, sse);
    const effect = this.step({ type: 'head', retryable: status === 429 || status >= 500, verdict });
    switch (effect) {
      case 'decline':
        return this.settled({ kind: 'declined', why: { kind: 'status', status, rawHeaders } });
      case 'error_answer': {
        this.settled({ kind: 'answered', status, rawHeaders });
        const name = encoding.kind === 'opaque' ? encoding.name : contentEncoding;
        const why = t === null ? ` answered ${status} with a body in content-encoding "${name}", which the proxy cannot check for its key` : ` answered in content-encoding "${name}", which the proxy cannot read to translate`;
        return this.answerError(undecodable(provider.prefix, why));
      }
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
      this.decoder = createBodyDecoder(encoding.name, { data: (c) => this.onPlain(c), end: () => this.onPlainEnd(), error: (m) => this.broken(undecodable(provider.prefix, `: ${m}`)) });
    }
    if (effect === 'hold') {
      this.state = { id: 'holding', holding: t === null || status >= 400 ? Holding.error(status, rawHeaders) : Holding.whole(status) };
      // A translated answer is translated once it has all come: until then the time is the provider's.
      if (t !== null) this.timing?.waitStarted();
      return;
    }
    if (t !== null) {
      this.state = { id: 'streaming', passing: Passing.translated(createSseFrames(), t.stream(), key) };
      res.writeHead(status, translatedHead(t, requestId, this.timing, 'text/event-stream; charset=utf-8', ['cache-control', 'no-cache']));
      res.flushHeaders();
      return;
    }
    // Outside errors, a short key is a placeholder that answers may contain as a word.
    const masked = maskedKey(key);
    const passing = Passing.asCame(sse ? createSseFrames() : null, !sse && this.decoder === null && contentLength !== undefined ? Number(contentLength) : -1, masked, sse && this.askedUsage);
    this.state = { id: 'streaming', passing };
    // An event stream may lose a half event or gain the proxy's error event: the upstream's length no longer holds.
    res.writeHead(status, passedHead(res, rawHeaders, requestId, this.decoder !== null || sse, masked, this.timing));
    // The client learns the stream has begun even if the first event is slow. Not at
    // once: the first event often came in the same read, and then goes out with the
    // head in one write.
    if (sse) queueMicrotask(() => passing.wrote || this.state.id !== 'streaming' || res.flushHeaders());
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
    if (state.id === 'holding') return state.holding.push(chunk, this.r.observer);
    if (state.id !== 'streaming') return;
    const { passing } = state;
    this.r.observer.read(chunk);
    const out = passing.push(chunk);
    if (out === null) return;
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
    const { state, r, t } = this;
    if (state.id === 'streaming') {
      const end = state.passing.end(r.provider.prefix);
      if (end.kind === 'cut_mid_event') {
        return this.broken({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${r.provider.prefix}" ended its stream in the middle of an event` });
      }
      if (end.cut) r.observer.cut();
      if (this.step({ type: 'end' }) !== 'complete') return;
      if (end.bytes !== null) r.observer.tap(end.bytes);
      r.res.end(end.bytes ?? undefined);
      return;
    }
    if (state.id !== 'holding' || this.step({ type: 'end' }) !== 'complete') return;
    // A translated answer's time from here on is the proxy's (translating it).
    if (t !== null) this.timing?.waitEnded();
    const e = state.holding.complete(r, t, this.timing);
    if (e !== null) this.answerError(e);
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
    this.answerError(unreachableError(provider.prefix, `${provider.hostname}:${provider.port}`, failure, r.tunnelHint()));
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
    this.answerError(e);
  }

  private logTimeout(stage: 'headers' | 'chunk'): void {
    const { r } = this;
    r.log?.({ event: 'proxy_upstream_timeout', request_id: r.requestId, provider: r.provider.prefix, stage, timeout_s: r.provider.timeoutSeconds });
  }

  /** The proxy's own error answer, in the client's shape; a translated request's names the fields it left out. */
  private answerError(e: ProxyError): void {
    const { r, t } = this;
    if (t !== null && t.dropped.length > 0 && !r.res.headersSent) r.res.setHeader('x-tunnel-manager-dropped', t.dropped.join(','));
    sendError(r.res, r.requestId, e, false, r.family);
  }

  /**
   * The answer began and cannot complete. After the status line went out, an error can
   * only be a last SSE event (after the last whole event: a partial one is dropped),
   * the client format's own when translated; any other body is cut short, so it cannot
   * pass for complete. A held answer had nothing out yet: the client gets a whole
   * error answer instead.
   */
  private broken(e: ProxyError, event: RelayEvent = { type: 'broken' }, before?: () => void): void {
    const { state, r } = this;
    const effect = this.step(event);
    if (effect !== 'error_event' && effect !== 'error_answer') return;
    before?.();
    if (state.id === 'holding' || effect === 'error_answer') return this.answerError(e);
    if (state.id !== 'streaming') return;
    r.observer.cut();
    const last = state.passing.fail(e, r.family);
    if (last === null) return void r.res.destroy();
    // A translated stream's last event is the answer's own bytes (maybe its first); the proxy's error event, passed as it came, is not.
    if (typeof last !== 'string') r.observer.tap(last);
    r.res.end(last === '' ? undefined : last);
  }

  onClientClose(): void {
    const stage = this.state.id;
    if (this.step({ type: 'client_closed' }) !== 'cancel') return;
    if (stage === 'waiting') this.settled({ kind: 'ended' });
    const { r } = this;
    r.log?.({ event: 'proxy_client_closed', request_id: r.requestId, provider: r.provider.prefix, stage: stage === 'waiting' ? 'waiting' : 'relaying', ms: Date.now() - this.started });
  }
}
