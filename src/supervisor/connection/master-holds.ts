// Which forward specs a shared connection's master holds, for forward-queue.ts: a
// forward of a spec the master holds already (a renamed tunnel's, the same ports and
// target) needs no `-O forward`, and one whose `-O cancel` is queued or under way must
// wait for it (added meanwhile, it would be the master's no-op, then cancelled).
// Tied to the master's attempt: a new master holds nothing of the old one's.

/** A forward as the master knows it: the same flag and value are the same listener. */
export const specKey = (fwd: { flag: string; value: string }): string => `${fwd.flag} ${fwd.value}`;

export class MasterHolds {
  private readonly held = new Set<string>();
  private heldBy: number | null = null;
  private readonly cancelling = new Map<string, number>();

  /** `attempt` is the master's attempt while it is up, null otherwise. */
  constructor(private readonly attempt: () => number | null) {}

  has(key: string): boolean {
    return this.now().has(key);
  }

  /** A `-O forward` of `key` succeeded on the master that is up now. */
  add(key: string): void {
    this.now().add(key);
  }

  /** A `-O cancel` of `key` is queued: from now on the master is taken not to hold it. */
  cancelQueued(key: string): void {
    this.held.delete(key);
    this.cancelling.set(key, (this.cancelling.get(key) ?? 0) + 1);
  }

  /** That `-O cancel` ended (done, failed or timed out). */
  cancelEnded(key: string): void {
    const left = (this.cancelling.get(key) ?? 0) - 1;
    if (left > 0) this.cancelling.set(key, left);
    else this.cancelling.delete(key);
  }

  cancelPending(key: string): boolean {
    return this.cancelling.has(key);
  }

  /** The master is gone: it holds nothing, and its queued cancels will not run. */
  clear(): void {
    this.held.clear();
    this.cancelling.clear();
  }

  private now(): Set<string> {
    const attempt = this.attempt();
    if (attempt !== this.heldBy) {
      this.held.clear();
      this.heldBy = attempt;
    }
    return this.held;
  }
}
