/**
 * Every way the panel can fail to talk to the daemon, each with its own code, an
 * English sentence saying what happened and what to do, and the values the page's
 * catalogues put in their own sentence (`error.<code>`). One place decides, so the
 * list, start/stop, the live events and the login terminal all say the same thing.
 */

/** Codes of failures where the daemon's own API was never reached, or refused the panel itself. */
export const DAEMON_FAILURE_CODES = [
  'daemon_connecting',
  'daemon_refused',
  'daemon_timeout',
  'daemon_unresolved',
  'daemon_unreachable',
  'daemon_connection_lost',
  'daemon_token_missing',
  'daemon_token_rejected',
  'daemon_forbidden',
  'daemon_loading',
  'daemon_wrong_service',
] as const;
export type DaemonFailureCode = (typeof DAEMON_FAILURE_CODES)[number];

/** Why a call to the daemon's API did not give a 2xx body. */
export type DaemonFailure =
  /** The panel could not talk to the daemon (or to the daemon's API at all): the page says what to fix. */
  | { reason: 'connection'; code: DaemonFailureCode; message: string; params: Record<string, string> }
  /** The daemon answered with its own error (a tunnel not found, a config invalid): passed on as it said. */
  | { reason: 'daemon'; status: number; code: string; message: string };

const connection = (code: DaemonFailureCode, message: string, params: Record<string, string>): DaemonFailure => ({ reason: 'connection', code, message, params });

const WHERE_HINT = 'start the daemon (tunnel-manager), or point the panel at it with --api or TUNNEL_API_URL';

/** A failure to connect, from the network error's code (ECONNREFUSED…) or the abort's name. */
export function networkFailure(where: string, errno: string | undefined, timedOut: boolean): DaemonFailure {
  if (timedOut || errno === 'ETIMEDOUT') {
    return connection('daemon_timeout', `the daemon at ${where} did not answer in time; check that it is not stuck and that nothing between drops the connection`, { where });
  }
  switch (errno) {
    case 'ECONNREFUSED':
    case 'ENOENT':
      return connection('daemon_refused', `nothing listens at ${where}: ${WHERE_HINT}`, { where });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return connection('daemon_unresolved', `the host name of ${where} is not known; check --api or TUNNEL_API_URL`, { where });
    case 'EUNTRUSTED':
      return connection('daemon_wrong_service', `${where} is served by another account of this machine, not by yours or root: it is not your daemon, and nothing was sent to it; stop that server, or point --api or TUNNEL_API_URL at your daemon`, { where, detail: errno });
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_VERSION':
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPROTO':
      return connection('daemon_wrong_service', `${where} does not answer like the tunnel-manager daemon (${errno}); check --api or TUNNEL_API_URL`, { where, detail: errno });
    default:
      return connection('daemon_unreachable', `the daemon at ${where} is not reachable (${errno ?? 'network error'}); ${WHERE_HINT}`, { where, detail: errno ?? 'network error' });
  }
}

/** What the daemon's error body says, when it is the daemon's shape `{"error":{"code","message"}}`. */
function daemonError(body: unknown): { code: string; message: string } | null {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof e?.code === 'string' && typeof e.message === 'string' ? { code: e.code, message: e.message } : null;
}

/**
 * A non-2xx answer. A 401 is always about the panel's token (the browser's own login
 * is the panel's business), told apart by whether the panel has one; an answer that
 * is not the daemon's JSON means something else listens there.
 */
export function httpFailure(where: string, status: number, body: unknown, hasToken: boolean): DaemonFailure {
  const own = daemonError(body);
  if (status === 401) {
    return hasToken
      ? connection('daemon_token_rejected', `the daemon at ${where} refused the panel's TUNNEL_API_TOKEN: start the panel with TUNNEL_API_TOKEN set to the daemon's own token`, { where })
      : connection('daemon_token_missing', `the daemon at ${where} needs a token: start the panel with TUNNEL_API_TOKEN set to the daemon's token`, { where });
  }
  if (own === null) {
    return connection('daemon_wrong_service', `${where} answered ${status}, not like the tunnel-manager daemon; check --api or TUNNEL_API_URL`, { where, detail: String(status) });
  }
  if (status === 403 && (own.code === 'host_not_allowed' || own.code === 'foreign_origin' || own.code === 'forbidden')) {
    return connection('daemon_forbidden', `the daemon at ${where} refused the panel's request (${own.code}: ${own.message})`, { where, detail: own.code });
  }
  if (status === 503 && own.code === 'loading') {
    return connection('daemon_loading', `the daemon at ${where} is still reading its config file; this page updates when it is done`, { where });
  }
  return { reason: 'daemon', status, code: own.code, message: own.message };
}

/** The failure of an open stream that ended: the page says so until it is back. */
export const connectionLost = (where: string): DaemonFailure =>
  connection('daemon_connection_lost', `lost the connection to the daemon at ${where}; reconnecting`, { where });

export const connecting = (where: string): DaemonFailure => connection('daemon_connecting', `connecting to the daemon at ${where}`, { where });
