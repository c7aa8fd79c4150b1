import type { Clock } from './clock.js';

/**
 * Logins between spawn and authentication on the whole machine, whatever the hosts.
 * Each costs ssh ~0.1 s of CPU (its key exchange) and a process spawn that blocks the
 * daemon's thread until the child has exec'd; at 1000 tunnels to ten hosts, 40 at once
 * (4 per host) saturated two cores and kept the API from answering for seconds. Eight
 * keep the cores busy without starving the API.
 */
export const MAX_LOGINS_IN_FLIGHT = 8;

/** At most `max` holders; the rest wait first come first served, and a leaving holder hands its place to the next. */
class Slots {
  /** Holders now (a hand-over keeps the count). */
  inFlight = 0;
  private waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /** Resolves true once a place is held, or false when `signal` aborted first. */
  async take(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    if (this.inFlight < this.max) {
      this.inFlight++;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = () => {
        this.waiting = this.waiting.filter((w) => w !== wake);
        resolve(false);
      };
      this.waiting.push(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  give(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.inFlight--;
  }
}

class HostSlots extends Slots {
  /** Earliest moment of the next spawn. */
  nextFree = 0;
}

/**
 * Paces ssh logins. Per host, because sshd's MaxStartups (10:30:100 by default) drops
 * connections that are not yet authenticated beyond its first number: starting thirty
 * tunnels to one bastion at once would lose some of them. Spawns to one host are at
 * least `gapMs` apart, and at most `maxInFlight` are between spawn and login at a time
 * — on a loaded machine a login can take longer than the gap, and the gap alone was
 * measured to let drops through. And machine-wide, at most `maxInFlightTotal` logins
 * at a time (see MAX_LOGINS_IN_FLIGHT).
 */
export class SpawnSpacer {
  private readonly hosts = new Map<string, HostSlots>();
  private readonly machine: Slots;

  constructor(
    private readonly clock: Clock,
    private readonly gapMs = 100,
    private readonly maxInFlight = 4,
    maxInFlightTotal = MAX_LOGINS_IN_FLIGHT,
  ) {
    this.machine = new Slots(maxInFlightTotal);
  }

  /**
   * Waits for `host`'s next spawn slot. Resolves with the function that frees it
   * (idempotent; call it once the attempt logged in or ended), or null when `signal`
   * aborted first.
   */
  async acquire(host: string, signal: AbortSignal): Promise<(() => void) | null> {
    const slots = this.slotsOf(host);
    if (!(await slots.take(signal))) return null;
    // The host's place first: a machine-wide place is then never held by an attempt
    // that waits for its host, so other hosts keep starting.
    if (!(await this.machine.take(signal))) {
      slots.give();
      return null;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.machine.give();
      slots.give();
    };
    // Booked once both places are held, so that the gap holds between actual spawns.
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
      slots = new HostSlots(this.maxInFlight);
      this.hosts.set(host, slots);
    }
    return slots;
  }
}

/** The host part of `user@host`: pacing is about the server, whoever logs in. */
export function spacingKey(remoteHost: string): string {
  return remoteHost.slice(remoteHost.lastIndexOf('@') + 1).toLowerCase();
}
