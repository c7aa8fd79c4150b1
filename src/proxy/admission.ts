import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyConfig } from '../config/proxy-schema.js';
import { bearerMatches, clientAuthorization } from './auth.js';
import { applyCors } from './cors.js';
import type { ProxyDeps } from './deps.js';
import { sendError, type ErrorFamily } from './errors.js';
import { observeRequest, type Observation } from './observe.js';
import type { Runtime } from './providers.js';
import { pickRequestId } from './request-id.js';

/** A request let through: its id, the configuration in force when it arrived, and its record. */
export interface Admitted {
  requestId: string;
  runtime: Runtime;
  obs: Observation;
}

export type Method = 'GET' | 'POST' | 'DELETE';

/**
 * What every route does first, in this order: an id and a record (so that even a
 * refused request has its log line), CORS (a preflight is answered here), the method
 * (one, several, or null for a route that answers any), then the client's key. GET
 * takes HEAD too. Null when it already answered.
 */
export type Admit = (req: IncomingMessage, res: ServerResponse, endpoint: string, method: Method | readonly Method[] | null, family: ErrorFamily) => Admitted | null;

function allows(method: Method | readonly Method[], asked: string | undefined): boolean {
  if (typeof method === 'string') return asked === method || (method === 'GET' && asked === 'HEAD');
  return method.some((m) => allows(m, asked));
}

export function createAdmission(deps: ProxyDeps, runtimeOf: (config: ProxyConfig | null) => Runtime): Admit {
  return (req, res, endpoint, method, family) => {
    const requestId = pickRequestId(req.headers['x-request-id']);
    const obs = observeRequest({ requestId, endpoint, res, log: deps.log, metrics: deps.metrics });
    const runtime = runtimeOf(deps.getConfig());
    if (applyCors(req, res, runtime.corsOrigins, requestId)) return null;
    if (method !== null && !allows(method, req.method)) {
      const list = (typeof method === 'string' ? [method] : method).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
      res.setHeader('allow', list.join(', '));
      sendError(res, requestId, { status: 405, type: 'invalid_request_error', code: 'method_not_allowed', message: `use ${list.filter((m) => m !== 'HEAD').join(' or ')} for this path` }, true, family);
      return null;
    }
    return authorize(req, res, requestId, runtime, family) ? { requestId, runtime, obs } : null;
  };
}

/** True when the caller may use the group, else false after answering 401 (or 503 when no key can ever match). */
function authorize(req: IncomingMessage, res: ServerResponse, requestId: string, runtime: Runtime, family: ErrorFamily): boolean {
  if (runtime.clientKeys === null) return true;
  if (runtime.clientKeys.length === 0) {
    // Fail closed, and say it is the server's setup, not the caller's key.
    sendError(res, requestId, { status: 503, type: 'server_error', code: 'proxy_keys_unset', message: 'proxy.api_keys refers only to environment variables that are not set; see the server log' }, true, family);
    return false;
  }
  const given = clientAuthorization(req.headers);
  if (bearerMatches(given, runtime.clientKeys)) return true;
  const message = given === undefined ? 'missing API key: send "Authorization: Bearer <key>" (or "x-api-key: <key>")' : 'incorrect API key';
  sendError(res, requestId, { status: 401, type: 'authentication_error', code: 'invalid_api_key', message }, true, family);
  return false;
}
