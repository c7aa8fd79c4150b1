import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { pathOf } from '../edge/http-listener.js';
import { bearerCheck, isOpenPath } from './auth.js';
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
  return pathOf(url) === '/health';
}

/**
 * Who may learn that the daemon is loading: on a listener with tokens, only a request
 * that presents one (or one to a path the token does not guard, /v1); any other goes
 * on to be refused 401, as it would be after the load. Null: everyone (the socket, a
 * listener without tokens).
 */
export type LoadingAudience = ((req: IncomingMessage) => boolean) | null;

/**
 * A path every layer reads as written: no percent-encoding, dot segment, backslash or
 * doubled slash, which the adapter or the router may resolve into another path (Hono
 * routes `/%761/models` and `/list/../v1/models` to /v1, which the token does not guard).
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*\/?$/;

/**
 * The audience of a TCP listener with `tokens`: the token's own rule (auth.ts). Only
 * a plain path to a guarded route without the token is left to be refused; any other
 * path is told `loading`, as before the token mattered, so that no reading of it
 * reaches a route while the config loads.
 */
export function loadingAudience(tokens: readonly string[] | null): LoadingAudience {
  if (tokens === null || tokens.length === 0) return null;
  const accepted = bearerCheck(tokens);
  return (req) => {
    const path = pathOf(req.url);
    return !PLAIN_PATH.test(path) || isOpenPath(path) || accepted(req.headers.authorization);
  };
}

/**
 * Answers 503 `loading` and returns true while `loading()`; else false, and the
 * request goes on. A request outside `audience` goes on too: the routes' own token
 * check refuses it without reading the config, so loading never answers before it.
 */
export function loadingGate(loading: () => boolean, audience: LoadingAudience = null): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!loading() || openWhileLoading(req.url)) return false;
    if (audience !== null && !audience(req)) return false;
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

/** The same for a WebSocket upgrade (a login terminal): answered on the socket, never upgraded; outside `audience`, the terminal's token check refuses it. */
export function refuseUpgradeWhileLoading(loading: () => boolean, req: IncomingMessage, socket: Duplex, audience: LoadingAudience = null): boolean {
  if (!loading()) return false;
  if (audience !== null && !audience(req)) return false;
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: ${LOADING_RETRY_AFTER_S}\r\ncontent-length: ${Buffer.byteLength(TEXT)}\r\n\r\n${TEXT}`,
  );
  return true;
}
