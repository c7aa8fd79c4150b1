import type { ServerResponse } from 'node:http';
import type { Exchange } from './upstream.js';

/**
 * The one timer of a relay, and the client's pace. It bounds the wait for the
 * provider's status line and, while a body flows, each gap between its pieces, so a
 * long answer that keeps flowing is never cut (SPEC §9). Armed once: each sign of
 * life notes the time, and a timer that fires after such a note is armed again for
 * what is left (a piece of the body costs a clock read, not a timer update).
 *
 * A client that reads slowly is not a silent provider: while the client's side is
 * full the provider is not read (TCP pushes back on it) and the timer ignores the
 * pause. `stop` ends it, when the relay ends (its signal's hearer: relay-signal.ts).
 */
export class GapTimer {
  private last = Date.now();
  private timer: NodeJS.Timeout;
  // The client's side is full: the provider is paused until it drains.
  private blocked = false;

  constructor(
    private readonly ms: number,
    private readonly onTimeout: () => void,
  ) {
    this.timer = setTimeout(this.fire, ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** The provider spoke (its head, a piece of its body). */
  alive(): void {
    this.last = Date.now();
  }

  /**
   * Writes to the client; when its side is full, pauses the exchange until it drains.
   * Returns what `res.write` does.
   */
  write(res: ServerResponse, out: Buffer, exchange: Exchange): boolean {
    const flowing = res.write(out);
    if (!flowing && !this.blocked) {
      this.blocked = true;
      exchange.pause();
      res.once('drain', () => {
        this.blocked = false;
        this.last = Date.now();
        exchange.resume();
      });
    }
    return flowing;
  }

  private readonly fire = (): void => {
    const idle = Date.now() - this.last;
    if (this.blocked || idle < this.ms) {
      // A blocked reader is not an upstream gap; otherwise the upstream spoke since the timer was set.
      this.timer = setTimeout(this.fire, this.blocked ? this.ms : this.ms - idle);
      return;
    }
    this.onTimeout();
  };
}
