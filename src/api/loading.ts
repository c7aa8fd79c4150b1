import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EngineApi } from './engine-api.js';
import type { ApiErrorBody } from './types.js';

/**
 * Until the daemon's first load of the config file is done (read, validated, handed
 * to the supervisor), it knows no tunnel: an answer from /list, /status, /config,
 * /logs, /metrics, /events or /v1 would show an empty or partial config. The
 * listeners open before that load (so that a thousand tunnels' start never delays
 * them), and every route but /health answers 503 `loading` with Retry-After meanwhile.
 */
export const stillLoading = (engine: EngineApi): boolean => engine.configHealth().loaded_at === null;

/** Seconds a client is told to wait before asking again. */
export const LOADING_RETRY_AFTER_S = 1;

// The control API's shape, which also has OpenAI's `type` and `param` for /v1 clients.
const BODY: ApiErrorBody & { error: { type: string; param: null } } = {
  error: { code: 'loading', message: 'the daemon is still loading its config file; try again in a moment', type: 'server_error', param: null },
};
const TEXT = JSON.stringify(BODY);

/** /health answers while loading (and says so); everything else waits for the load. */
function openWhileLoading(url: string | undefined): boolean {
  const path = (url ?? '/').split('?')[0];
  return path === '/health';
}

/** Answers 503 `loading` and returns true while `loading()`; else false, and the request goes on. */
export function loadingGate(loading: () => boolean): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!loading() || openWhileLoading(req.url)) return false;
    res.writeHead(503, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(TEXT),
      'retry-after': String(LOADING_RETRY_AFTER_S),
      // Every answer carries an id (SPEC §9); this one is made before any route reads the request's.
      'x-request-id': randomUUID(),
    });
    res.end(req.method === 'HEAD' ? undefined : TEXT);
    return true;
  };
}

/** The same for a WebSocket upgrade (a login terminal): answered on the socket, never upgraded. */
export function refuseUpgradeWhileLoading(loading: () => boolean, socket: Duplex): boolean {
  if (!loading()) return false;
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: ${LOADING_RETRY_AFTER_S}\r\ncontent-length: ${Buffer.byteLength(TEXT)}\r\n\r\n${TEXT}`,
  );
  return true;
}
