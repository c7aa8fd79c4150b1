import { bodyEncoding } from '../request/body-encoding.js';
import { createBodyDecoder, type BodyDecoder } from '../relay/body-decoder.js';
import { sendError, timeoutError, type ProxyError } from '../errors.js';
import { timingOf, type Timing } from '../observe/server-timing.js';
import { GapTimer } from '../relay/gap-timer.js';
import type { RelayRequest, Settled } from '../relay/relay-request.js';
import { next, type RelayEffect, type RelayEvent } from '../relay/relay-stages.js';
import { RelaySignal, type RelayHearer } from '../relay/relay-signal.js';
import { HeldError } from '../relay/held-error.js';
import { holdsKey, MIN_MASKED_KEY_LENGTH, scrubText } from '../relay/key-scrub.js';
import { keyOf } from '../relay/provider.js';
import { upstreamRequestHeaders } from '../relay/upstream-headers.js';
import { relayHeaders } from '../relay/client-headers.js';
import { createSseFrames, eventTooLarge, isEventStream, type SseFrames } from '../relay/sse-frames.js';
import type { Exchange, ExchangeSink, UpstreamFailure } from '../relay/upstream.js';
import { isObject } from './shape.js';
import { readEvents } from './sse-events.js';
import type { StreamTranslator } from './stream.js';
import type { Translation } from './translation.js';

/**
 * Relays one translated request: the provider gets the request in its own format, the
 * client gets the answer in its own, as it arrives. The stages are the relay's
 * (relay/relay-stages.ts), and so is the timer (one for the head, then one for each
 * gap while streaming):
 *
 *   waiting ──2xx event stream──▶ streaming (each whole event translated and written at once) ──▶ done
 *      │    ──2xx JSON──────────▶ holding (the answer is one JSON document: translated whole) ──▶ done
 *      │    ──4xx/5xx───────────▶ holding (the error, in the client's shape, key blanked out) ──▶ done
 *      │ timeout ▶ 504, unreachable ▶ 502 (or declined, for the next target, as for any request)
 *      └── client closed (any stage) ▶ upstream exchange aborted ▶ done
 *
 * The record reads the usage from the provider's answer before it is translated: the
 * client's format may leave it out (a chat stream that did not ask for it), and a
 * client's `tpm` counts it all the same.
 */
export function relayTranslated(r: RelayRequest, t: Translation): Promise<Settled> {
  return new Promise((resolve) => new TranslatedRelay(r, t, resolve));
}

/** The stage, with what each holds. */
type State =
  | { id: 'waiting' }
  | { id: 'streaming'; frames: SseFrames; stream: StreamTranslator }
  /** A 2xx JSON answer, kept whole to be translated (`chunks`); an error answer, held to blank out the key (`held`). */
  | { id: 'holding'; status: number; kept: { chunks: Buffer[] } | { held: HeldError } }
  | { id: 'done' };

class TranslatedRelay implements ExchangeSink, RelayHearer {
  private state: State = { id: 'waiting' };
  private decoder: BodyDecoder | null = null;
  private readonly signal = RelaySignal.take(this);
  private readonly key: string | null;
  private readonly timer: GapTimer;
  private readonly exchange: Exchange;
  // The request's clock (observe/server-timing.ts), looked up once.
  private readonly timing: Timing | null;

  constructor(
    private readonly f: RelayRequest,
    private readonly t: Translation,
    private readonly settled: (s: Settled) => void,
  ) {
    this.key = keyOf(f.provider);
    this.timer = new GapTimer(f.provider.timeoutMs, () => this.onTimeout());
    f.observer.watch(this);
    this.timing = timingOf(f.res);
    this.timing?.waitStarted();
    if (f.observer.metered && f.payload !== null) f.observer.sent(f.payload.length);
    // The client's query string belongs to the client's API (`?beta=true`), not the provider's: it stays here.
    this.exchange = f.pool.request(
      f.provider.origin,
      {
        method: 'POST',
        path: t.upstreamPath(f.provider.basePath),
        headers: this.requestHeaders(),
        body: f.payload,
        keepAliveMs: f.provider.keepAliveMs,
      },
      this,
    );
  }

  private requestHeaders(): string[] {
    const { f, t } = this;
    const headers = upstreamRequestHeaders(f.req, f.requestId, f.provider.credential, f.forwarded);
    for (const [name, value] of t.defaultHeaders) if (f.req.headers[name] === undefined) headers.push(name, value);
    return headers;
  }

  /** As relay.ts: the machine's next stage; a relay that ends early aborts its signal, one that completes releases it (relay/relay-signal.ts). */
  private step(event: RelayEvent): RelayEffect {
    const { stage, effect } = next(this.state, event, this.f.fallible);
    if (stage.id === 'done' && this.state.id !== 'done') {
      this.state = { id: 'done' };
      this.signal.end(effect);
    }
    return effect;
  }

  /** What the relay started ends with it: the timer; and, cancelled, the exchange and the decoder. */
  relayEnded(cancelled: boolean): void {
    this.timer.stop();
    if (!cancelled) return;
    this.exchange.abort();
    this.decoder?.destroy();
  }

  head(status: number, rawHeaders: string[]): void {
    const { f } = this;
    const { contentType, contentEncoding } = relayHeaders(rawHeaders);
    const encoding = bodyEncoding(contentEncoding);
    const sse = status < 400 && contentType !== undefined && isEventStream(contentType);
    this.timing?.waitEnded();
    const effect = this.step({ type: 'head', retryable: status === 429 || status >= 500, verdict: encoding.kind === 'opaque' ? 'refuse' : sse ? 'stream' : 'hold' });
    if (effect === 'decline') return this.settled({ kind: 'declined', why: { kind: 'status', status, rawHeaders } });
    if (effect !== 'error_answer' && effect !== 'pass_head' && effect !== 'hold') return;
    this.settled({ kind: 'answered', status, rawHeaders });
    if (effect === 'error_answer') {
      return this.answerError({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${f.provider.prefix}" answered in content-encoding "${encoding.kind === 'opaque' ? encoding.name : contentEncoding}", which the proxy cannot read to translate` });
    }
    this.timer.alive();
    if (encoding.kind === 'decodable') this.decoder = createBodyDecoder(encoding.name, { data: (c) => this.onPlain(c), end: () => this.onPlainEnd(), error: (m) => this.onUndecodable(m) });
    if (effect === 'pass_head') {
      this.state = { id: 'streaming', frames: createSseFrames(), stream: this.t.answer.stream() };
      f.res.writeHead(status, this.headers('text/event-stream; charset=utf-8', ['cache-control', 'no-cache']));
      f.res.flushHeaders();
      return;
    }
    this.state = { id: 'holding', status, kept: status >= 400 ? { held: new HeldError(status, rawHeaders) } : { chunks: [] } };
    // A whole answer is translated once it has all come: until then the time is the provider's.
    this.timing?.waitStarted();
  }

  data(chunk: Buffer): void {
    this.timer.alive();
    if (this.decoder !== null) this.decoder.write(chunk);
    else this.onPlain(chunk);
  }

  end(): void {
    if (this.decoder !== null) this.decoder.end();
    else this.onPlainEnd();
  }

  private onPlain(chunk: Buffer): void {
    const { state } = this;
    if (state.id === 'holding') {
      if ('held' in state.kept) return state.kept.held.push(chunk);
      // The usage is the provider's, read before translation: the client's format may leave it out (a chat stream that did not ask for it).
      this.f.observer.read(chunk);
      state.kept.chunks.push(chunk);
      return;
    }
    if (state.id !== 'streaming') return;
    this.f.observer.read(chunk);
    const whole = state.frames.push(chunk);
    if (whole !== null) {
      let out = '';
      for (const e of readEvents(whole.toString('utf8'))) out += state.stream.event(e);
      this.write(out);
    }
    // An event grown too large to hold ends the answer with the client format's error event.
    if (state.frames.overflowed()) this.midway(eventTooLarge(this.f.provider.prefix));
  }

  private onPlainEnd(): void {
    const { state } = this;
    if (state.id === 'streaming') {
      const tail = state.frames.rest();
      let out = tail === null ? '' : readEvents(tail.toString('utf8')).map((e) => state.stream.event(e)).join('');
      const closing = state.stream.end();
      if (closing === null) {
        this.f.observer.cut();
        out += state.stream.fail({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${this.f.provider.prefix}" ended its stream before its answer was complete` });
      } else {
        out += closing;
      }
      if (this.step({ type: 'end' }) === 'complete') this.write(out, true);
      return;
    }
    if (state.id !== 'holding' || this.step({ type: 'end' }) !== 'complete') return;
    this.timing?.waitEnded();
    const { status, kept } = state;
    if ('held' in kept) {
      const { held } = kept;
      const own = upstreamError(held.status, held.scrubbed(this.key).toString('utf8'), this.f.provider.prefix);
      const e = this.t.answer.error?.(held.status, own, this.f.provider.prefix) ?? own;
      const retryAfter = Number(headerOf(held.rawHeaders, 'retry-after'));
      return this.answerError(Number.isFinite(retryAfter) && retryAfter > 0 ? { ...e, retryAfterSeconds: Math.ceil(retryAfter) } : e);
    }
    const { chunks } = kept;
    const text = (chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks)).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (!isObject(parsed)) return this.answerError({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: `provider "${this.f.provider.prefix}" answered ${status} with a body that is not a JSON object` });
    const answer = this.t.answer.json(parsed);
    if (!answer.ok) return this.answerError(answer.error);
    const body = Buffer.from(this.masked(JSON.stringify(answer.value)));
    this.f.res.writeHead(status, this.headers('application/json', ['content-length', String(body.length)]));
    this.f.observer.tap(body);
    this.f.res.end(body);
  }

  private write(text: string, last = false): void {
    const { res, observer } = this.f;
    if (text === '') {
      if (last) res.end();
      return;
    }
    const out = Buffer.from(this.masked(text));
    observer.tap(out);
    if (last) return void res.end(out);
    this.timer.write(res, out, this.exchange);
  }

  /** The text with the provider's key blanked out (a key of MIN_MASKED_KEY_LENGTH or more: a shorter one is a placeholder word). */
  private masked(text: string): string {
    const key = this.key;
    return key !== null && key.length >= MIN_MASKED_KEY_LENGTH && holdsKey(Buffer.from(text), key) ? scrubText(text, key) : text;
  }

  /** The head of a translated answer, written now: its Server-Timing is the proxy's time so far (translation included, the provider's waits not). */
  private headers(contentType: string, more: string[]): string[] {
    const h = ['content-type', contentType, 'x-request-id', this.f.requestId, ...more];
    if (this.t.dropped.length > 0) h.push('x-tunnel-manager-dropped', this.t.dropped.join(','));
    const timing = this.timing?.header() ?? null;
    if (timing !== null) h.push('server-timing', timing);
    return h;
  }

  private answerError(e: ProxyError): void {
    const { res } = this.f;
    if (res.headersSent) return;
    if (this.t.dropped.length > 0) res.setHeader('x-tunnel-manager-dropped', this.t.dropped.join(','));
    sendError(res, this.f.requestId, e, false, this.f.family);
  }

  private onUndecodable(message: string): void {
    this.midway({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${this.f.provider.prefix}": ${message}` });
  }

  fail(failure: UpstreamFailure): void {
    const { f } = this;
    if (this.state.id !== 'waiting') {
      const broke = (): void => this.midway({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${f.provider.prefix}" closed the connection before its response was complete` });
      // What the decoder still holds of the body goes out first (the whole events in it).
      return this.decoder === null ? broke() : this.decoder.settle(broke);
    }
    const effect = this.step({ type: 'unreachable' });
    if (effect !== 'decline' && effect !== 'error_answer') return;
    f.log?.({ event: 'proxy_upstream_error', request_id: f.requestId, provider: f.provider.prefix, error: failure.code });
    if (effect === 'decline') return this.settled({ kind: 'declined', why: { kind: 'unreachable', code: failure.code } });
    this.settled({ kind: 'ended' });
    this.answerError({ status: 502, type: 'upstream_error', code: 'upstream_unreachable', message: `provider "${f.provider.prefix}" is unreachable at ${f.provider.hostname}:${f.provider.port}: ${failure.code}${f.tunnelHint()}` });
  }

  private onTimeout(): void {
    const { f } = this;
    const waiting = this.state.id === 'waiting';
    const stage = waiting ? 'headers' : 'chunk';
    const e = timeoutError(f.provider.prefix, f.provider.timeoutSeconds, stage);
    f.log?.({ event: 'proxy_upstream_timeout', request_id: f.requestId, provider: f.provider.prefix, stage, timeout_s: f.provider.timeoutSeconds });
    if (!waiting) return this.midway(e, { type: 'timeout' });
    const effect = this.step({ type: 'timeout' });
    if (effect === 'decline') return this.settled({ kind: 'declined', why: { kind: 'timeout' } });
    if (effect !== 'error_answer') return;
    this.settled({ kind: 'ended' });
    this.answerError(e);
  }

  /** A failure once the answer began: the client format's error event ends a stream; any other answer is an error answer (nothing of it was sent). */
  private midway(e: ProxyError, event: RelayEvent = { type: 'broken' }): void {
    const { state } = this;
    const effect = this.step(event);
    if (effect !== 'error_event' && effect !== 'error_answer') return;
    if (state.id !== 'streaming' || effect === 'error_answer') return this.answerError(e);
    this.f.observer.cut();
    this.write(state.stream.fail(e), true);
  }

  onClientClose(): void {
    const stage = this.state.id;
    if (this.step({ type: 'client_closed' }) !== 'cancel') return;
    if (stage === 'waiting') this.settled({ kind: 'ended' });
    this.f.log?.({ event: 'proxy_client_closed', request_id: this.f.requestId, provider: this.f.provider.prefix, stage: stage === 'holding' ? 'reading' : stage });
  }
}

function headerOf(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/** A provider's error answer (OpenAI's, Anthropic's or vLLM's shape) as the proxy's error, status and message kept. */
export function upstreamError(status: number, text: string, prefix: string): ProxyError {
  let message = text.slice(0, 2000);
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v)) {
      const inner = isObject(v.error) ? v.error : v;
      if (typeof inner.message === 'string') message = inner.message;
      else if (typeof v.detail === 'string') message = v.detail;
    }
  } catch {
    // Not JSON: the text itself.
  }
  const type: ProxyError['type'] = status === 401 || status === 403 ? 'authentication_error' : status >= 500 ? 'upstream_error' : 'invalid_request_error';
  return { status, type, code: 'upstream_error', message: `provider "${prefix}" answered ${status}: ${message}` };
}
