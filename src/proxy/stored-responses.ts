import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestListener } from '../http-listener.js';
import type { Admit, Admitted } from './admission.js';
import { readBody } from './body.js';
import { DEFAULT_MAX_BODY_BYTES } from './deps.js';
import { sendError, type ProxyError } from './errors.js';
import type { Shared } from './fallback.js';
import { forwardChat } from './relay.js';
import { describeKeyProblem } from './providers.js';
import { MAX_OWNERS } from './response-owners.js';
import { locate } from './routing.js';

const PREFIX = '/v1/responses/';

/** What may follow a response id, and the method each takes. */
const SUBPATHS: ReadonlyMap<string, 'GET' | 'POST' | null> = new Map([
  ['', null],
  ['cancel', 'POST'],
  ['input_items', 'GET'],
]);

const notFound = (message: string): ProxyError => ({ status: 404, type: 'invalid_request_error', code: 'not_found', message });

/**
 * The calls on a stored response by its id, which name no model:
 * `GET`/`DELETE /v1/responses/{id}`, `POST …/{id}/cancel` and `GET …/{id}/input_items`
 * (the `openai` client's `responses.retrieve`, `.delete`, `.cancel` and
 * `.inputItems.list`; a background response is polled this way). Each goes to the
 * provider that created the response (response-owners.ts), else to
 * `default_provider`, with the client's query (`?stream=true`, paging) and without
 * fallback: no other provider holds that response.
 */
export function createStoredResponseRoute(begin: Admit, shared: Shared): RequestListener {
  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const [rawId = '', ...rest] = url.slice(PREFIX.length, q === -1 ? undefined : q).split('/');
    const sub = rest.join('/');
    const fixed = SUBPATHS.get(sub);
    if (fixed === undefined) {
      // Not a call on a stored response: answered as any unknown path.
      const b = begin(req, res, '/responses/{id}', req.method === 'POST' ? 'POST' : 'GET', 'openai');
      if (b !== null) sendError(res, b.requestId, notFound(`no route ${req.method ?? ''} ${url.split('?')[0]!.slice(0, 200)}; a stored response takes GET and DELETE /v1/responses/{id}, POST …/{id}/cancel and GET …/{id}/input_items`));
      return;
    }
    const method = fixed ?? (req.method === 'DELETE' ? 'DELETE' : 'GET');
    const begun = begin(req, res, sub === '' ? '/responses/{id}' : `/responses/{id}/${sub}`, method, 'openai');
    if (begun === null) return;
    let id: string;
    try {
      id = decodeURIComponent(rawId);
    } catch {
      return sendError(res, begun.requestId, { status: 400, type: 'invalid_request_error', code: 'invalid_request', message: 'the response id in the path is not valid percent-encoding' });
    }
    if (method !== 'POST') return send(shared, req, res, begun, method, id, sub, null);
    readBody(req, DEFAULT_MAX_BODY_BYTES, (body) => {
      if (Buffer.isBuffer(body)) send(shared, req, res, begun, method, id, sub, body.length === 0 ? null : body);
      else if (body.reason === 'too_large') sendError(res, begun.requestId, { status: 413, type: 'invalid_request_error', code: 'request_too_large', message: `the request body is larger than ${body.limit} bytes` }, true);
    });
  };
}

function send(shared: Shared, req: IncomingMessage, res: ServerResponse, begun: Admitted, method: 'GET' | 'POST' | 'DELETE', id: string, sub: string, payload: Buffer | null): void {
  const { requestId, runtime, obs } = begun;
  const owner = shared.owners.ownerOf(id) ?? runtime.defaultProvider;
  if (owner === null) {
    return sendError(res, requestId, {
      ...notFound(`no response ${JSON.stringify(id.slice(0, 200))} has passed through this proxy since it started (it knows the provider of the last ${MAX_OWNERS} responses it relayed); set proxy.default_provider to send calls on other responses to one provider`),
      code: 'response_not_found',
    });
  }
  obs.provider = owner;
  const entry = runtime.providers.get(owner);
  if (entry === undefined) return sendError(res, requestId, { ...notFound(`response ${JSON.stringify(id.slice(0, 200))} was created by provider "${owner}", which is no longer configured`), code: 'response_not_found' });
  const located = locate(entry, 'openai', shared.tunnel);
  if (!located.ok) return sendError(res, requestId, located.error);
  const provider = located.value;
  if (!provider.key.ok) {
    const code = provider.key.error.reason === 'unset_variable' ? 'provider_key_unset' : 'provider_key_unusable';
    return sendError(res, requestId, { status: 500, type: 'server_error', code, message: describeKeyProblem(provider.prefix, provider.key.error) });
  }
  forwardChat({
    req,
    res,
    requestId,
    provider,
    pool: shared.pool,
    method,
    payload,
    endpoint: `/responses/${encodeURIComponent(id)}${sub === '' ? '' : `/${sub}`}`,
    forwarded: runtime.forwarded,
    family: 'openai',
    observer: obs,
    tunnelHint: () => shared.tunnelHint(provider),
    log: shared.log,
  });
}
