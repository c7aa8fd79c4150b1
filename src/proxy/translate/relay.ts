import { createBodyDecoder, type BodyDecoder } from '../relay/body-decoder.js';
import { bodyEncoding } from '../request/body-encoding.js';
import { sendError, timeoutError, type ProxyError } from '../errors.js';
import type { RelayRequest } from '../relay/relay-request.js';
import { HeldError } from '../relay/held-error.js';
import { holdsKey, MIN_MASKED_KEY_LENGTH, scrubText } from '../relay/key-scrub.js';
import { keyOf } from '../relay/provider.js';
import { upstreamRequestHeaders } from '../relay/upstream-headers.js';
import { relayHeaders } from '../relay/client-headers.js';
import { createSseFrames, type SseFrames } from '../relay/sse-frames.js';
import type { Exchange, ExchangeSink, UpstreamFailure } from '../relay/upstream.js';
import { isObject } from './shape.js';
import { readEvents } from './sse-events.js';
import type { StreamTranslator } from './stream.js';
import type { Translation } from './translation.js';

/**
 * Relays one translated request: the provider gets the request in its own format, the
 * client gets the answer in its own, as it arrives.
 *
 *   waiting ──2xx event stream──▶ streaming (each whole event translated and written at once) ──▶ done
 *      │    ──2xx JSON──────────▶ reading (the answer is one JSON document: translated whole) ──▶ done
 *      │    ──4xx/5xx───────────▶ reading (the error, in the client's shape, key blanked out) ──▶ done
 *      │ timeout ▶ 504, unreachable ▶ 502 (or the next target, as for any request)
 *      └── client closed (any state) ▶ upstream exchange aborted ▶ done
 *
 * Timeouts are the relay's (relay.ts): one for the head, then one for each gap while streaming.
 */
export function relayTranslated(f: RelayRequest, t: Translation): void {
  new TranslatedRelay(f, t).start();
}

class TranslatedRelay implements ExchangeSink {
  private state: 'waiting' | 'streaming' | 'reading' | 'done' = 'waiting';
  private frames: SseFrames | null = null;
  private stream: StreamTranslator | null = null;
  // A 2xx JSON answer, kept whole to be translated; an error answer, held to blank out the key.
  private chunks: Buffer[] | null = null;
  private body: HeldError | null = null;
  private status = 0;
  private decoder: BodyDecoder | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastActivity = Date.now();
  private exchange: Exchange | null = null;
  // A slow reader: the provider is not read meanwhile (TCP pushes back), and the pause is no upstream gap.
  private clientBlocked = false;
  private readonly key: string | null;

  constructor(
    private readonly f: RelayRequest,
    private readonly t: Translation,
  ) {
    this.key = keyOf(f.provider);
  }

  start(): void {
    const { f, t } = this;
    this.timer = setTimeout(() => this.onTimeout(), f.provider.timeoutMs);
    f.observer.watch(this);
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

  head(status: number, rawHeaders: string[]): void {
    const { f } = this;
    if ((status === 429 || status >= 500) && f.fallback?.({ kind: 'status', status, rawHeaders })) {
      this.stop();
      this.abort();
      return;
    }
    this.lastActivity = Date.now();
    const { contentType, contentEncoding } = relayHeaders(rawHeaders);
    const encoding = bodyEncoding(contentEncoding);
    if (encoding.kind === 'opaque') {
      this.stop();
      this.abort();
      return this.answerError({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${f.provider.prefix}" answered in content-encoding "${encoding.name}", which the proxy cannot read to translate` });
    }
    if (encoding.kind === 'decodable') this.decoder = createBodyDecoder(encoding.name, { data: (c) => this.onPlain(c), end: () => this.onPlainEnd(), error: (m) => this.onUndecodable(m) });
    if (status < 400 && contentType !== undefined && /^\s*text\/event-stream/i.test(contentType)) {
      this.state = 'streaming';
      this.frames = createSseFrames();
      this.stream = this.t.answer.stream();
      f.res.writeHead(status, this.headers('text/event-stream; charset=utf-8', ['cache-control', 'no-cache']));
      f.res.flushHeaders();
      return;
    }
    this.state = 'reading';
    this.status = status;
    if (status >= 400) this.body = new HeldError(status, rawHeaders);
    else this.chunks = [];
  }

  data(chunk: Buffer): void {
    this.lastActivity = Date.now();
    if (this.decoder !== null) this.decoder.write(chunk);
    else this.onPlain(chunk);
  }

  end(): void {
    if (this.decoder !== null) this.decoder.end();
    else this.onPlainEnd();
  }

  private onPlain(chunk: Buffer): void {
    if (this.state === 'reading') return this.chunks === null ? this.body!.push(chunk) : void this.chunks.push(chunk);
    if (this.state !== 'streaming') return;
    const whole = this.frames!.push(chunk);
    if (whole === null) return;
    let out = '';
    for (const e of readEvents(whole.toString('utf8'))) out += this.stream!.event(e);
    this.write(out);
  }

  private onPlainEnd(): void {
    if (this.state === 'streaming') {
      const tail = this.frames!.rest();
      let out = tail === null ? '' : readEvents(tail.toString('utf8')).map((e) => this.stream!.event(e)).join('');
      const closing = this.stream!.end();
      if (closing === null) {
        this.f.observer.cut();
        out += this.stream!.fail({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${this.f.provider.prefix}" ended its stream before its answer was complete` });
      } else {
        out += closing;
      }
      this.stop();
      this.write(out, true);
      return;
    }
    if (this.state !== 'reading') return;
    this.stop();
    const held = this.body;
    if (held !== null) {
      const own = upstreamError(held.status, held.scrubbed(this.key).toString('utf8'), this.f.provider.prefix);
      const e = this.t.answer.error?.(held.status, own, this.f.provider.prefix) ?? own;
      const retryAfter = Number(headerOf(held.rawHeaders, 'retry-after'));
      return this.answerError(Number.isFinite(retryAfter) && retryAfter > 0 ? { ...e, retryAfterSeconds: Math.ceil(retryAfter) } : e);
    }
    const chunks = this.chunks!;
    const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (!isObject(parsed)) return this.answerError({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: `provider "${this.f.provider.prefix}" answered ${this.status} with a body that is not a JSON object` });
    const answer = this.t.answer.json(parsed);
    if (!answer.ok) return this.answerError(answer.error);
    const body = Buffer.from(this.masked(JSON.stringify(answer.value)));
    this.f.res.writeHead(this.status, this.headers('application/json', ['content-length', String(body.length)]));
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
    if (!res.write(out) && !this.clientBlocked) {
      this.clientBlocked = true;
      this.exchange?.pause();
      res.once('drain', () => {
        this.clientBlocked = false;
        this.lastActivity = Date.now();
        this.exchange?.resume();
      });
    }
  }

  /** The text with the provider's key blanked out (a key of MIN_MASKED_KEY_LENGTH or more: a shorter one is a placeholder word). */
  private masked(text: string): string {
    const key = this.key;
    return key !== null && key.length >= MIN_MASKED_KEY_LENGTH && holdsKey(Buffer.from(text), key) ? scrubText(text, key) : text;
  }

  private headers(contentType: string, more: string[]): string[] {
    const h = ['content-type', contentType, 'x-request-id', this.f.requestId, ...more];
    if (this.t.dropped.length > 0) h.push('x-tunnel-manager-dropped', this.t.dropped.join(','));
    return h;
  }

  private answerError(e: ProxyError): void {
    this.stop();
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
    if (this.state === 'streaming' || this.state === 'reading') {
      return this.midway({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${f.provider.prefix}" closed the connection before its response was complete` });
    }
    if (this.state !== 'waiting') return;
    this.stop();
    f.log?.({ event: 'proxy_upstream_error', request_id: f.requestId, provider: f.provider.prefix, error: failure.code });
    if (f.fallback?.({ kind: 'unreachable', code: failure.code })) return;
    this.answerError({ status: 502, type: 'upstream_error', code: 'upstream_unreachable', message: `provider "${f.provider.prefix}" is unreachable at ${f.provider.hostname}:${f.provider.port}: ${failure.code}${f.tunnelHint()}` });
  }

  private onTimeout(): void {
    if (this.state === 'done') return;
    const { f } = this;
    const idle = Date.now() - this.lastActivity;
    if (this.clientBlocked || idle < f.provider.timeoutMs) {
      this.timer = setTimeout(() => this.onTimeout(), this.clientBlocked ? f.provider.timeoutMs : f.provider.timeoutMs - idle);
      return;
    }
    const e = timeoutError(f.provider.prefix, f.provider.timeoutSeconds, this.state === 'waiting' ? 'headers' : 'chunk');
    f.log?.({ event: 'proxy_upstream_timeout', request_id: f.requestId, provider: f.provider.prefix, stage: this.state === 'waiting' ? 'headers' : 'chunk', timeout_s: f.provider.timeoutSeconds });
    if (this.state === 'waiting') {
      this.stop();
      this.abort();
      if (f.fallback?.({ kind: 'timeout' })) return;
      return this.answerError(e);
    }
    this.midway(e);
  }

  /** A failure once the answer began: the client format's error event ends a stream; any other answer is an error answer (nothing of it was sent). */
  private midway(e: ProxyError): void {
    const wasStreaming = this.state === 'streaming';
    this.stop();
    this.abort();
    this.decoder?.destroy();
    if (!wasStreaming) return this.answerError(e);
    this.f.observer.cut();
    this.write(this.stream!.fail(e), true);
  }

  private stop(): void {
    this.state = 'done';
    clearTimeout(this.timer!);
  }

  private abort(): void {
    this.exchange?.abort();
  }

  onClientClose(): void {
    if (this.state === 'done') return;
    const stage = this.state;
    this.stop();
    this.abort();
    this.decoder?.destroy();
    this.f.log?.({ event: 'proxy_client_closed', request_id: this.f.requestId, provider: this.f.provider.prefix, stage });
  }
}

function headerOf(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1];
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
