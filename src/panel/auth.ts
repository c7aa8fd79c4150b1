import { randomBytes } from 'node:crypto';
import { digestSecret, secretMatches } from '../edge/tokens.js';

/** The cookie that carries a panel session id (HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'tm_panel_session';

/** Constant-time: neither the password's length nor its content leaks through the time taken. */
export function passwordMatches(given: string, expected: string): boolean {
  return secretMatches(given, [digestSecret(expected)]);
}

/**
 * Logged-in browsers, by random session id. Sessions live in memory: a restarted
 * panel asks for the password again. Idle sessions expire; the number is bounded so
 * that a flood of logins cannot grow the map without end.
 */
export class Sessions {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;
  readonly #expiry = new Map<string, number>();

  constructor(opts: { ttlMs?: number; max?: number; now?: () => number } = {}) {
    this.#ttlMs = opts.ttlMs ?? 12 * 60 * 60 * 1000;
    this.#max = opts.max ?? 1000;
    this.#now = opts.now ?? Date.now;
  }

  create(): string {
    const id = randomBytes(32).toString('base64url');
    if (this.#expiry.size >= this.#max) {
      const oldest = this.#expiry.keys().next().value;
      if (oldest !== undefined) this.#expiry.delete(oldest);
    }
    this.#expiry.set(id, this.#now() + this.#ttlMs);
    return id;
  }

  /** True for a live session; using it extends it. */
  touch(id: string | undefined): boolean {
    if (id === undefined) return false;
    const until = this.#expiry.get(id);
    if (until === undefined) return false;
    this.#expiry.delete(id);
    if (until <= this.#now()) return false;
    this.#expiry.set(id, this.#now() + this.#ttlMs);
    return true;
  }

  revoke(id: string | undefined): void {
    if (id !== undefined) this.#expiry.delete(id);
  }
}
