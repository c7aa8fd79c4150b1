import type { ErrorFamily, ProxyError } from '../errors.js';
import { sseErrorEvent } from '../errors.js';
import type { EventTranslation } from './body-translation.js';
import { KeyScrubber, maskedText } from './key-scrub.js';
import { streamTail, type SseFrames } from './sse-frames.js';
import { withoutUsage } from './usage-strip.js';

/** How a streamed body ended (Passing.end). */
export type PassingEnd =
  /** The provider ended it in the middle of an event: the relay ends the answer with its error event. */
  | { kind: 'cut_mid_event' }
  /** The last bytes for the client (null: none); `cut`: they end the answer with the client format's error event, not its end. */
  | { kind: 'last'; bytes: Buffer | null; cut: boolean };

/**
 * A streamed body on its way to the client, set up once by its head (relay.ts): as it
 * came (framed into whole events when it is a stream, usage the client did not ask
 * for left out, the key masked as it passes), or translated by the answer's plug
 * (body-translation.ts). Which of the two is decided here per piece by one field,
 * never by a call through the plug, so a body that passes as it came pays nothing for
 * the translations.
 */
export class Passing {
  // Whether a body byte went to the client (the head goes with the first one).
  wrote = false;
  // Plain body bytes seen, to know a passed-on body's last piece (with `whole`).
  private received = 0;

  private constructor(
    /** SSE framing: whole events only, and the proxy may end the stream with its error event. Null: the body passes as it comes. */
    readonly frames: SseFrames | null,
    /**
     * The upstream's Content-Length when it still describes what the client gets (else
     * -1): the same bytes, or the same length with the key masked. A body that arrives
     * whole in one piece leaves with the head in one `end`.
     */
    readonly whole: number,
    /** The key masked as the body passes (a provider with a key of MIN_MASKED_KEY_LENGTH or more). */
    private readonly scrubber: KeyScrubber | null,
    /** The proxy asked for the usage the client did not: the events pass without it. */
    private readonly unasked: boolean,
    /** The events translated into the client's format; null: the bytes pass. */
    readonly events: EventTranslation | null,
    /** The provider's key, masked out of the translated text (which is written whole, so without `scrubber`). */
    private readonly key: string | null,
  ) {}

  /** A body passed as it came, `masked`: the key masked in it as it passes (key-scrub.ts maskedKey). */
  static asCame(frames: SseFrames | null, whole: number, masked: string | null, unasked: boolean): Passing {
    return new Passing(frames, whole, masked === null ? null : new KeyScrubber(masked), unasked, null, null);
  }

  /** A stream translated event by event. */
  static translated(frames: SseFrames, events: EventTranslation, key: string | null): Passing {
    return new Passing(frames, -1, null, false, events, key);
  }

  /** What goes to the client now for a piece of the provider's plain (decoded) body; null: nothing yet. */
  push(chunk: Buffer): Buffer | null {
    let out = this.frames === null ? chunk : this.frames.push(chunk);
    if (out === null) return null;
    if (this.events !== null) return this.text(this.events.events(out));
    if (this.unasked) {
      out = withoutUsage(out);
      if (out.length === 0) return null;
    }
    if (this.scrubber !== null) {
      // Whole events hold whole keys; a passed-on body may split one between pieces.
      this.received += chunk.length;
      out = this.scrubber.push(out, this.frames !== null || this.received === this.whole);
      if (out.length === 0) return null;
    }
    return out;
  }

  /** The provider ended the body (`prefix`: its name, for the error event of a translated stream that stopped before its answer did). */
  end(prefix: string): PassingEnd {
    const rest = this.frames?.rest() ?? null;
    const { events, scrubber } = this;
    if (events !== null) {
      let out = rest === null ? '' : events.events(rest);
      const closing = events.end();
      const cut = closing === null;
      out += closing ?? events.fail({ status: 502, type: 'upstream_error', code: 'upstream_disconnected', message: `provider "${prefix}" ended its stream before its answer was complete` });
      return { kind: 'last', bytes: this.text(out), cut };
    }
    const tail = streamTail(rest);
    if (tail.kind === 'cut') return { kind: 'cut_mid_event' };
    // What the scrubber held back, then the completed last event (scrubbed too).
    const heldBack = scrubber?.flush() ?? null;
    const whole = tail.kind === 'complete' ? (this.unasked ? withoutUsage(tail.bytes) : tail.bytes) : null;
    let last = whole === null || whole.length === 0 ? null : (scrubber?.push(whole, true) ?? whole);
    if (heldBack !== null) last = last === null ? heldBack : Buffer.concat([heldBack, last]);
    return { kind: 'last', bytes: last, cut: false };
  }

  /**
   * The last bytes of a body that cannot complete: the client format's error event
   * (after the last whole event: a partial one is dropped), or null for a body that is
   * not a stream, which is to be cut short so that it cannot pass for complete.
   */
  fail(e: ProxyError, family: ErrorFamily | undefined): Buffer | string | null {
    // What it held back may be the start of the key, cut off: it goes.
    this.scrubber?.flush();
    if (this.events !== null) return this.text(this.events.fail(e)) ?? '';
    return this.frames === null ? null : sseErrorEvent(e, family);
  }

  /** Text the translation wrote for the client, the key blanked out; null for none. */
  private text(text: string): Buffer | null {
    return text === '' ? null : Buffer.from(maskedText(text, this.key));
  }
}
