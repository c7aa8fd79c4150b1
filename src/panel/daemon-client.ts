import { err, ok, type Result } from '../result.js';

/** Why a call to the daemon's API did not give a 200 body. */
export type DaemonFailure =
  | { reason: 'unreachable'; message: string }
  | { reason: 'http'; status: number; code: string; message: string };

/**
 * The daemon's control API as the panel uses it. The token is added here and goes
 * nowhere else: the browser only ever talks to the panel.
 */
export interface DaemonClient {
  /** Where the daemon is, without credentials, for messages. */
  readonly where: string;
  get<T>(path: string): Promise<Result<T, DaemonFailure>>;
  post<T>(path: string): Promise<Result<T, DaemonFailure>>;
  /** Opens GET /events; the caller reads the body until `signal` aborts it. */
  events(signal: AbortSignal): Promise<Result<ReadableStream<Uint8Array>, DaemonFailure>>;
}

const GET_TIMEOUT_MS = 5_000;
// Stopping waits for ssh to be gone (TERM, then KILL after a grace period).
const POST_TIMEOUT_MS = 20_000;

const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'unknown host name',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
};

/** Why fetch failed, in words: Node hides the reason in `cause` (or in `cause.errors` for several addresses). */
function describe(e: unknown): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return 'no answer in time';
  const cause = (e as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } } | null)?.cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  if (code) return CAUSES[code] ?? code;
  return cause?.message ?? (e instanceof Error ? e.message : String(e));
}

export function createDaemonClient(apiUrl: string, token: string | null, fetchImpl: typeof fetch = fetch): DaemonClient {
  const base = new URL(apiUrl);
  base.username = '';
  base.password = '';
  const where = base.origin;
  const prefix = base.href.replace(/\/$/, '');
  const headers = (accept: string): Record<string, string> => ({
    accept,
    ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
  });

  async function call<T>(method: 'GET' | 'POST', path: string): Promise<Result<T, DaemonFailure>> {
    let res: Response;
    try {
      res = await fetchImpl(`${prefix}${path}`, {
        method,
        headers: headers('application/json'),
        signal: AbortSignal.timeout(method === 'GET' ? GET_TIMEOUT_MS : POST_TIMEOUT_MS),
      });
    } catch (e) {
      return err({ reason: 'unreachable', message: `the daemon at ${where} is not reachable (${describe(e)})` });
    }
    const body: unknown = await res.json().catch(() => null);
    if (res.ok) return ok(body as T);
    const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    return err({
      reason: 'http',
      status: res.status,
      code: typeof e?.code === 'string' ? e.code : 'daemon_error',
      message: typeof e?.message === 'string' ? e.message : `the daemon answered ${res.status}`,
    });
  }

  return {
    where,
    get: (path) => call('GET', path),
    post: (path) => call('POST', path),
    async events(signal) {
      try {
        const res = await fetchImpl(`${prefix}/events`, { headers: headers('text/event-stream'), signal });
        if (!res.ok || res.body === null) {
          await res.body?.cancel();
          return err({ reason: 'http', status: res.status, code: 'events_refused', message: `the daemon answered ${res.status} to /events` });
        }
        return ok(res.body);
      } catch (e) {
        return err({ reason: 'unreachable', message: `the daemon at ${where} is not reachable (${describe(e)})` });
      }
    },
  };
}
