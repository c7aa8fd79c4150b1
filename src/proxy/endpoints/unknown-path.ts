import type { RequestListener } from '../../http-listener.js';
import type { ProxyDeps } from '../deps.js';
import { sendError, type ProxyError } from '../errors.js';
import { observeRequest } from '../observe/request-record.js';
import { applyCors } from '../request/cors.js';
import { pickRequestId } from '../request/request-id.js';
import type { Runtime } from '../route/providers.js';
import { ENDPOINTS, errorFamilyOf } from '../routes.js';

/**
 * Any path of the `/v1` group that is none of its routes: a browser's preflight is
 * answered (CORS), anything else is a 404 in the shape the path's clients read, so that
 * a client asking for an endpoint the proxy lacks (audio, say) learns it from the proxy.
 */
export function unknownPath(deps: ProxyDeps, runtimeOf: (config: ReturnType<ProxyDeps['getConfig']>) => Runtime): RequestListener {
  return (req, res) => {
    const requestId = pickRequestId(req.headers['x-request-id']);
    // One label for every unknown path, so that a scanner cannot grow the series without bound.
    observeRequest({ requestId, endpoint: 'other', res, log: deps.log, metrics: deps.metrics });
    if (applyCors(req, res, runtimeOf(deps.getConfig()).corsOrigins, requestId)) return;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    sendError(res, requestId, notFound(req.method ?? '', path), true, errorFamilyOf(path, req.headers['anthropic-version']));
  };
}

/** Any path of the group other than its routes. */
export function notFound(method: string, path: string): ProxyError {
  return {
    status: 404,
    type: 'invalid_request_error',
    code: 'not_found',
    message: `no route ${method} ${path.slice(0, 200)}; the proxy serves POST /v1/${ENDPOINTS.map((e) => e.path.slice(1)).join(', /v1/')}, GET /v1/models and GET /v1/models/{id}`,
  };
}
