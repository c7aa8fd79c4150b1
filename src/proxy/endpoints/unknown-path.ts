import type { RequestListener } from '../../edge/http-listener.js';
import type { Admission } from './admission.js';
import { sendError, type ProxyError } from '../errors.js';
import { ENDPOINTS, errorFamilyOf } from '../routes.js';

/**
 * Any path of the `/v1` group that is none of its routes (files, batches, …: they name
 * no model, so no provider could be chosen): a browser's preflight is answered (CORS);
 * anything else passes the admission as every route does (a key that opens no route
 * gets its 401, a client over its limits its 429), then is a 404 in the shape the
 * path's clients read, so that a client asking for an endpoint the proxy lacks learns
 * it from the proxy.
 */
export function unknownPath(admission: Admission): RequestListener {
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    // One label for every unknown path, so that a scanner cannot grow the series without bound.
    const begun = admission.begin(req, res, 'other', null, errorFamilyOf(path, req.headers['anthropic-version']));
    if (begun === null || admission.enter(begun, { from: 'none' }) === null) return;
    sendError(res, begun.requestId, notFound(req.method ?? '', path), true, begun.family);
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
