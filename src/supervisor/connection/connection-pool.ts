// The shared connections (SPEC §14), by id: tunnels whose logins are the same (host
// and whole option set) share one. A connection exists while a tunnel wants it or its
// master is still being ended; the pool forgets it once it rests.
import { ConnectionRunner } from './connection.js';
import type { ConnectionDeps, ConnectionPlan } from './connection-types.js';

export class ConnectionPool {
  private readonly connections = new Map<string, ConnectionRunner>();
  private readonly openedListeners = new Set<(id: string) => void>();
  private readonly changeListeners = new Set<(id: string) => void>();

  constructor(private readonly deps: ConnectionDeps) {}

  /** The connection for this plan, created on first use. */
  get(plan: ConnectionPlan): ConnectionRunner {
    let c = this.connections.get(plan.id);
    if (c === undefined) {
      const created = new ConnectionRunner(plan, this.deps);
      created.watch(() => {
        if (created.idle && this.connections.get(plan.id) === created) this.connections.delete(plan.id);
        for (const fn of [...this.changeListeners]) fn(plan.id);
      });
      created.onOpened(() => {
        for (const fn of [...this.openedListeners]) fn(plan.id);
      });
      this.connections.set(plan.id, created);
      c = created;
    } else {
      c.replan(plan);
    }
    return c;
  }

  /** A tunnel's refreshed plan: its connection, if it exists, reads it from now on. */
  replan(plan: ConnectionPlan): void {
    this.connections.get(plan.id)?.replan(plan);
  }

  /** The connection with this id, if it exists (never creates one). */
  find(id: string): ConnectionRunner | undefined {
    return this.connections.get(id);
  }

  /** Calls `fn` with a connection's id on every change of its state or pid. */
  onChange(fn: (id: string) => void): () => void {
    this.changeListeners.add(fn);
    return () => this.changeListeners.delete(fn);
  }

  /** True while connection `id`'s master is up. */
  isUp(id: string): boolean {
    return this.connections.get(id)?.up === true;
  }

  /** Calls `fn` with a connection's id each time its master is up. */
  onOpened(fn: (id: string) => void): () => void {
    this.openedListeners.add(fn);
    return () => this.openedListeners.delete(fn);
  }

  /** Ends every master (daemon shutdown) and waits for them to be gone. */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }
}
