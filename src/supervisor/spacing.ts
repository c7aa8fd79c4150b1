import type { Clock } from './clock.js';

/**
 * Keeps ssh spawns to one host at least `gapMs` apart, because sshd's MaxStartups
 * (10:30:100 by default) drops connections that arrive together: starting thirty
 * tunnels to one bastion at once would lose some of them.
 */
export class SpawnSpacer {
  private readonly nextFree = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly gapMs = 100,
  ) {}

  /** Books the next slot for `host` and returns how long to wait for it (0: now). */
  reserve(host: string): number {
    const now = this.clock.now();
    const slot = Math.max(now, this.nextFree.get(host) ?? 0);
    this.nextFree.set(host, slot + this.gapMs);
    return slot - now;
  }
}

/** The host part of `user@host`: spacing is about the server, whoever logs in. */
export function spacingKey(remoteHost: string): string {
  return remoteHost.slice(remoteHost.lastIndexOf('@') + 1).toLowerCase();
}
