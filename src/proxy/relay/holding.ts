import type { ProxyError } from '../errors.js';
import type { Timing } from '../observe/server-timing.js';
import type { BodyTranslation } from './body-translation.js';
import { headerOf, passedHead, translatedHead } from './client-headers.js';
import { HeldError } from './held-error.js';
import { maskedText } from './key-scrub.js';
import { keyOf } from './provider.js';
import type { RelayObserver, RelayRequest } from './relay-request.js';

/**
 * An answer the relay (relay.ts) keeps until it is complete, nothing of it sent yet:
 * an error answer, searched for the provider's key (HeldError); or a translated answer
 * that is not a stream, translated whole by the answer's plug (body-translation.ts).
 */
export class Holding {
  private readonly chunks: Buffer[] = [];

  private constructor(
    private readonly status: number,
    /** The error answer held; null: a whole answer to translate. */
    private readonly held: HeldError | null,
  ) {}

  /** An error answer (any answer but a translated 2xx one). */
  static error(status: number, rawHeaders: string[]): Holding {
    return new Holding(status, new HeldError(status, rawHeaders));
  }

  /** A translated 2xx answer. */
  static whole(status: number): Holding {
    return new Holding(status, null);
  }

  push(chunk: Buffer, observer: RelayObserver): void {
    if (this.held !== null) return this.held.push(chunk);
    // Read before translation: the client's format may leave the usage out (a chat stream that did not ask for it).
    observer.read(chunk);
    this.chunks.push(chunk);
  }

  /**
   * The answer, now that it is complete (`t`: its translation, null when it passes as it
   * came): written to the client, or the proxy's error to answer instead.
   */
  complete(r: RelayRequest, t: BodyTranslation | null, timing: Timing | null): ProxyError | null {
    const { held, status } = this;
    const key = keyOf(r.provider);
    if (t === null) {
      if (held === null) return null;
      const body = held.scrubbed(key);
      r.res.writeHead(status, passedHead(r.res, held.rawHeaders, r.requestId, true, key, timing, ['content-length', String(body.length)]));
      return this.send(r, body);
    }
    if (held !== null) {
      const e = t.error(status, held.scrubbed(key).toString('utf8'), r.provider.prefix);
      const retryAfter = Number(headerOf(held.rawHeaders, 'retry-after'));
      return Number.isFinite(retryAfter) && retryAfter > 0 ? { ...e, retryAfterSeconds: Math.ceil(retryAfter) } : e;
    }
    const { chunks } = this;
    const text = (chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks)).toString('utf8');
    const answer = t.whole(text, status, r.provider.prefix);
    if (!answer.ok) return answer.error;
    const body = Buffer.from(maskedText(answer.value, key));
    r.res.writeHead(status, translatedHead(t, r.requestId, timing, 'application/json', ['content-length', String(body.length)]));
    return this.send(r, body);
  }

  private send(r: RelayRequest, body: Buffer): null {
    r.observer.tap(body);
    r.res.end(body);
    return null;
  }
}
