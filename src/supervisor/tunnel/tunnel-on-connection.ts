// A tunnel runner's link to its shared connection (SPEC §14): whether it wants the
// connection now (it runs its master while any tunnel does), what its status record
// says of it, and, for an interactive tunnel, the login slot it shares with every
// interactive tunnel on that connection (SPEC §13).
import type { ConnectionRecord } from '../../tunnel/status.js';
import type { ConnectionRunner } from '../connection/connection.js';
import type { ConnectionPool } from '../connection/connection-pool.js';
import { isActive, type Phase } from './tunnel-phase.js';
import type { LoginSlot } from '../process/login-slot.js';
import type { SharedForward } from '../plan/tunnel-plan.js';

export interface LinkHooks {
  /** The connection's state or pid changed: the tunnel's record shows it. */
  announce(): void;
  /** The connection is up again: a tunnel backing off because of it tries now. */
  kick(): void;
}

export class ConnectionLink {
  /** The connection this tunnel wants now, and how to stop watching it. */
  private joined: { conn: ConnectionRunner; unwatch: () => void } | null = null;

  constructor(
    private readonly pool: ConnectionPool,
    private readonly hash: string,
    private readonly hooks: LinkHooks,
  ) {}

  /**
   * The `connection` field: the connection that carries (or will carry) the forward. A
   * tunnel back in AUTH_REQUIRED without asking for its shared login (it ended before
   * one) shows that login as it is: the one every tunnel with this id waits for.
   */
  record(shared: SharedForward | null, phase: Phase): ConnectionRecord | null {
    if (shared === null) return null;
    if (this.joined !== null) return this.joined.conn.record();
    const resting = shared.connection.interactive && phase.id === 'login_needed' ? this.pool.find(shared.connection.id) : undefined;
    return resting?.record() ?? { id: shared.connection.id, pid: null, state: 'down' };
  }

  /**
   * Before a start or a person's login: out of RETRYING at once, and out of FAILED,
   * STOPPED or AUTH_REQUIRED afresh, the connection too, which may be backing off, or
   * resting after a failure no retry fixes or a login that ended without a person.
   */
  revive(shared: SharedForward | null, phase: Phase): void {
    if (shared !== null && (phase.id === 'backoff' || !isActive(phase))) this.pool.get(shared.connection).retryNow(shared.connection);
  }

  /**
   * A shared tunnel wants its connection while it is active and not being stopped: the
   * connection runs its master while any tunnel wants it, and kicks this one (a try at
   * once out of RETRYING) when it is up again.
   */
  follow(shared: SharedForward | null, phase: Phase): void {
    const wants = shared !== null && isActive(phase) && !(phase.id === 'stopping' && phase.then === 'stop');
    const id = wants ? shared.connection.id : null;
    if ((this.joined?.conn.id ?? null) === id) return;
    if (this.joined !== null) {
      this.joined.unwatch();
      this.joined.conn.unwant(this.hash);
      this.joined = null;
    }
    if (!wants) return;
    const conn = this.pool.get(shared.connection);
    this.joined = { conn, unwatch: conn.watch(() => this.hooks.announce()) };
    conn.want(this.hash, () => this.hooks.kick());
  }

  /** When the connection it waits for tries again, and why it is down (null: not backing off, or none joined). */
  retrying(): { at: number; error: string } | null {
    return this.joined?.conn.retrying ?? null;
  }

  /** The login slot of an interactive shared connection, created with it if need be. */
  slot(shared: SharedForward): LoginSlot {
    return this.pool.get(shared.connection).slot;
  }

  /** That slot as it is now, without creating a connection to find it (null: none exists). */
  currentSlot(shared: SharedForward): LoginSlot | null {
    return this.pool.find(shared.connection.id)?.slot ?? null;
  }

  /** A person attached a terminal: the shared login's stale prompt is replaced. */
  login(shared: SharedForward): void {
    this.pool.get(shared.connection).login();
  }
}
