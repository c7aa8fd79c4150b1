import type { Clock } from './clock.js';

interface HostSlots {
  /** Earliest moment of the next spawn. */
  nextFree: number;
  /** Attempts spawned and not yet logged in (or ended). */
  inFlight: number;
  /** Attempts waiting for one of those to finish logging in, first come first served. */
  waiting: Array<() => void>;
}

/**
 * Paces ssh logins to one host, because sshd's MaxStartups (10:30:100 by default)
 * drops connections that are not yet authenticated beyond its first number: starting
 * thirty tunnels to one bastion at once would lose some of them. Spawns are at least
 * `gapMs` apart, and at most `maxInFlight` are between spawn and login at a time — on
 * a loaded machine a login can take longer than the gap, and the gap alone was
 * measured to let drops through.
 */
export class SpawnSpacer {
  private readonly hosts = new Map<string, HostSlots>();

  constructor(
    private readonly clock: Clock,
    private readonly gapMs = 100,
    private readonly maxInFlight = 4,
  ) {}

  /**
   * Waits for `host`'s next spawn slot. Resolves with the function that frees it
   * (idempotent; call it once the attempt logged in or ended), or null when `signal`
   * aborted first.
   */
  async acquire(host: string, signal: AbortSignal): Promise<(() => void) | null> {
    if (signal.aborted) return null;
    const slots = this.slotsOf(host);
    if (slots.inFlight >= this.maxInFlight) {
      // A finishing attempt hands its place over, so inFlight already counts this one.
      const handedOver = await new Promise<boolean>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        };
        const onAbort = () => {
          slots.waiting = slots.waiting.filter((w) => w !== wake);
          resolve(false);
        };
        slots.waiting.push(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      if (!handedOver) return null;
    } else {
      slots.inFlight++;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = slots.waiting.shift();
      if (next !== undefined) next();
      else slots.inFlight--;
    };
    const now = this.clock.now();
    const at = Math.max(now, slots.nextFree);
    slots.nextFree = at + this.gapMs;
    if (at > now && !(await this.clock.sleep(at - now, signal))) {
      release();
      return null;
    }
    return release;
  }

  private slotsOf(host: string): HostSlots {
    let slots = this.hosts.get(host);
    if (slots === undefined) {
      slots = { nextFree: 0, inFlight: 0, waiting: [] };
      this.hosts.set(host, slots);
    }
    return slots;
  }
}

/** The host part of `user@host`: pacing is about the server, whoever logs in. */
export function spacingKey(remoteHost: string): string {
  return remoteHost.slice(remoteHost.lastIndexOf('@') + 1).toLowerCase();
}
