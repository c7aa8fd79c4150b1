import { Agent, fetch as undiciFetch } from 'undici';
import { err, ok, type Result } from '../kernel/result.js';
import { trustedConnection } from '../edge/trusted-connect.js';
import { httpFailure, networkFailure, type DaemonFailure } from './daemon-failure.js';

export type { DaemonFailure } from './daemon-failure.js';

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
// Opening the event stream: the daemon answers its headers at once.
const EVENTS_OPEN_TIMEOUT_MS = 10_000;

/** Why fetch threw: Node hides the network error's code in `cause` (or in `cause.errors` for several addresses). */
function thrown(where: string, e: unknown): DaemonFailure {
  const timedOut = e instanceof Error && e.name === 'TimeoutError';
  const cause = (e as { cause?: { code?: string; name?: string; errors?: { code?: string }[] } } | null)?.cause;
  // undici's parser error for an answer that is not HTTP carries no code of its own.
  const parser = cause?.name === 'HTTPParserError' ? 'HPE_INVALID_CONSTANT' : undefined;
  return networkFailure(where, cause?.code ?? cause?.errors?.[0]?.code ?? parser, timedOut);
}

export interface DaemonClientOptions {
  fetchImpl?: typeof fetch;
  /** For tests: how long a GET may take, and opening the event stream. */
  getTimeoutMs?: number;
  eventsOpenTimeoutMs?: number;
}

/**
 * fetch that connects only to a daemon the user owns (SPEC §6): the token goes to no
 * other account's server on the daemon's port. A TLS URL is left to its certificate.
 */
function trustedFetch(apiUrl: string): typeof fetch {
  if (new URL(apiUrl).protocol !== 'http:') return fetch;
  const connect = trustedConnection(process.getuid?.() ?? 0);
  const dispatcher = new Agent({ connect: (o, done) => connect({ hostname: o.hostname, port: o.port === '' ? 80 : Number(o.port) }, done as never) });
  return ((input: string, init?: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

export function createDaemonClient(apiUrl: string, token: string | null, opts: DaemonClientOptions = {}): DaemonClient {
  const fetchImpl = opts.fetchImpl ?? trustedFetch(apiUrl);
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
    let body: unknown;
    try {
      res = await fetchImpl(`${prefix}${path}`, {
        method,
        headers: headers('application/json'),
        signal: AbortSignal.timeout(method === 'GET' ? (opts.getTimeoutMs ?? GET_TIMEOUT_MS) : POST_TIMEOUT_MS),
      });
      body = await res.json().catch(() => undefined);
    } catch (e) {
      return err(thrown(where, e));
    }
    if (res.ok && body !== undefined) return ok(body as T);
    return err(httpFailure(where, res.ok ? 502 : res.status, body ?? null, token !== null));
  }

  return {
    where,
    get: (path) => call('GET', path),
    post: (path) => call('POST', path),
    async events(signal) {
      // Only opening is timed: once open, the stream lives until `signal` ends it.
      const opening = new AbortController();
      const follow = () => opening.abort(signal.reason);
      signal.addEventListener('abort', follow, { once: true });
      const timer = setTimeout(() => opening.abort(new DOMException('no answer in time', 'TimeoutError')), opts.eventsOpenTimeoutMs ?? EVENTS_OPEN_TIMEOUT_MS);
      try {
        const res = await fetchImpl(`${prefix}/events`, { headers: headers('text/event-stream'), signal: opening.signal });
        const isStream = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
        if (!res.ok || res.body === null || !isStream) {
          const body: unknown = await res.json().catch(() => null);
          return err(httpFailure(where, res.ok ? 502 : res.status, body, token !== null));
        }
        return ok(res.body);
      } catch (e) {
        return err(thrown(where, e instanceof Error && e.name === 'AbortError' && opening.signal.reason instanceof DOMException && opening.signal.reason.name === 'TimeoutError' ? opening.signal.reason : e));
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
