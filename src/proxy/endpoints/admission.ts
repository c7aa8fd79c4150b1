import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyConfig } from '../../config/proxy-schema.js';
import { clientAuthorization } from '../clients/api-keys.js';
import { callerOf } from '../clients/gate.js';
import type { ClientRule } from '../clients/rules.js';
import { applyCors } from '../request/cors.js';
import type { ProxyDeps } from '../deps.js';
import { sendError, type ErrorFamily } from '../errors.js';
import { observeRequest, type Observation } from '../observe/request-record.js';
import type { Runtime } from '../route/providers.js';
import { pickRequestId } from '../request/request-id.js';
import type { Method } from '../routes.js';

/** A request let through: its id, the configuration in force when it arrived, and its record. */
export interface Admitted {
  requestId: string;
  runtime: Runtime;
  obs: Observation;
  /** The client of `proxy.clients` whose key it came with, or null (no keys, or one of `api_keys`). */
  client: ClientRule | null;
}

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
    const caller = callerOf(clientAuthorization(req.headers), runtime.clientKeys, runtime.clients);
    if (!caller.ok) {
      sendError(res, requestId, caller.error, true, family);
      return null;
    }
    obs.client = caller.client?.name ?? null;
    return { requestId, runtime, obs, client: caller.client };
  };
}
