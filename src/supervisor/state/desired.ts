// What the user asked for each tunnel (start/stop), kept in the state dir so that a
// tunnel stopped by hand stays stopped across reloads and daemon restarts.
import type { DesiredState } from '../../tunnel/status.js';
import { readJson, writeFileAtomic } from './state-files.js';

export class DesiredStore {
  private readonly states: Map<string, DesiredState>;

  private constructor(
    private readonly path: string,
    states: Map<string, DesiredState>,
  ) {
    this.states = states;
  }

  /** Reads the file; a missing or damaged file means nothing was asked yet. */
  static load(path: string): DesiredStore {
    const raw = readJson(path);
    const states = new Map<string, DesiredState>();
    const tunnels = typeof raw === 'object' && raw !== null ? (raw as { tunnels?: unknown }).tunnels : undefined;
    if (typeof tunnels === 'object' && tunnels !== null) {
      for (const [hash, v] of Object.entries(tunnels)) {
        if (v === 'started' || v === 'stopped') states.set(hash, v);
      }
    }
    return new DesiredStore(path, states);
  }

  get(hash: string): DesiredState | undefined {
    return this.states.get(hash);
  }

  /** Sets several at once and writes the file once. */
  set(hashes: readonly string[], state: DesiredState): void {
    for (const h of hashes) this.states.set(h, state);
    this.save();
  }

  /** Drops the wishes of tunnels no longer configured; writes the file only when something went. */
  forget(hashes: readonly string[]): void {
    let changed = false;
    for (const h of hashes) changed = this.states.delete(h) || changed;
    if (changed) this.save();
  }

  private save(): void {
    writeFileAtomic(this.path, `${JSON.stringify({ tunnels: Object.fromEntries(this.states) }, null, 2)}\n`);
  }
}
