import type { StatusRecord, TunnelState } from '../api/types.js';

/** How a wait for RUNNING ended. */
export type WaitOutcome =
  | { kind: 'running'; records: StatusRecord[] }
  | { kind: 'failed'; records: StatusRecord[]; failed: StatusRecord[] }
  /** Interactive tunnels waiting for a person (tunnel-cli auth); the rest RUNNING. */
  | { kind: 'login'; records: StatusRecord[]; waiting: StatusRecord[] }
  | { kind: 'pending'; records: StatusRecord[]; pending: StatusRecord[] };

// AUTH_REQUIRED waits for a person, not for time: waiting longer would not change it.
const SETTLED: readonly TunnelState[] = ['RUNNING', 'FAILED', 'STOPPED', 'AUTH_REQUIRED'];

/**
 * Follows the tunnels a start is waiting for. The POST's answer gives the first
 * records; events seen on the stream since before the POST always win over it (the
 * last event for a tunnel is never older than the answer), whatever order they
 * arrive in. RUNNING is success; FAILED (permanent) and STOPPED (someone stopped
 * it meanwhile) are failures; AUTH_REQUIRED ends the wait with a pointer to
 * `tunnel-cli auth`, unless the login turned out to need no person (no prompt shown:
 * loginWithoutPrompt); STARTING and RETRYING keep the wait going.
 */
export class WaitTracker {
  private readonly fromAnswer = new Map<string, StatusRecord>();
  private readonly fromEvents = new Map<string, StatusRecord>();
  private order: string[] = [];
  /** Interactive tunnels whose ssh shows no prompt: logging in by itself, so AUTH_REQUIRED is not yet a person's turn. */
  private readonly noPrompt = new Set<string>();

  /** Records from the POST's answer; only these hashes are waited for. */
  answer(records: StatusRecord[]): void {
    for (const r of records) this.fromAnswer.set(r.hash, r);
    this.order = records.map((r) => r.hash);
  }

  /** A status event; returns the record when it concerns a waited-for tunnel and changed its state. */
  event(r: StatusRecord): StatusRecord | null {
    const before = this.current(r.hash);
    this.fromEvents.set(r.hash, r);
    if (!this.fromAnswer.has(r.hash)) return null;
    return before?.status === r.status && before.last_error === r.last_error ? null : r;
  }

  /** The login of `hash` needs no person (its ssh shows no prompt): wait for it as for any start. */
  loginWithoutPrompt(hash: string): void {
    this.noPrompt.add(hash);
  }

  current(hash: string): StatusRecord | undefined {
    return this.fromEvents.get(hash) ?? this.fromAnswer.get(hash);
  }

  records(): StatusRecord[] {
    return this.order.map((h) => this.current(h)).filter((r): r is StatusRecord => r !== undefined);
  }

  /** Null while some tunnel is still on its way. */
  outcome(): WaitOutcome | null {
    const records = this.records();
    const pending = records.filter((r) => this.pending(r));
    if (pending.length > 0) return null;
    const failed = records.filter((r) => r.status === 'FAILED' || r.status === 'STOPPED');
    if (failed.length > 0) return { kind: 'failed', records, failed };
    const waiting = records.filter((r) => r.status === 'AUTH_REQUIRED');
    return waiting.length > 0 ? { kind: 'login', records, waiting } : { kind: 'running', records };
  }

  /** The outcome when time is up. */
  timedOut(): WaitOutcome {
    const records = this.records();
    const pending = records.filter((r) => this.pending(r));
    return { kind: 'pending', records, pending };
  }

  private pending(r: StatusRecord): boolean {
    return !SETTLED.includes(r.status) || (r.status === 'AUTH_REQUIRED' && this.noPrompt.has(r.hash));
  }
}
