// What a person attached to an interactive tunnel's login is told when it ends: the
// tunnel's phase, read as the end of that login.
import { unreachable } from '../../kernel/unreachable.js';
import type { LoginOutcome } from '../types.js';
import type { Tunnel } from './tunnel-phase.js';

/** How a person's login ended, by the tunnel's phase now; null while it goes on (a prompt waits, or a stale one is being replaced). */
export function loginOutcome(t: Tunnel): LoginOutcome | null {
  const p = t.phase;
  const lost = (status: Exclude<LoginOutcome['status'], 'RUNNING'>): LoginOutcome => ({ status, message: t.lastError ?? 'ssh ended' });
  switch (p.id) {
    case 'awaiting_login':
      return null;
    case 'stopping':
      // A stale prompt being replaced: the person stays for the fresh one.
      return p.then === 'stop' ? { status: 'STOPPED', message: 'the tunnel was stopped' } : null;
    case 'running':
      return { status: 'RUNNING', message: null };
    case 'failed':
      return lost('FAILED');
    case 'login_needed':
      return lost('AUTH_REQUIRED');
    case 'stopped':
    case 'starting':
    case 'backoff':
      return { status: 'STOPPED', message: 'the tunnel was stopped' };
    default:
      return unreachable(p, 'phase');
  }
}
