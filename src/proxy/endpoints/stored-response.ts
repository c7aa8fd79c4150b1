import type { IncomingMessage } from 'node:http';
import type { RequestListener } from '../../edge/http-listener.js';
import type { Admission, Entered } from './admission.js';
import { routesAt, type Method } from '../routes.js';
import { readBody } from '../request/read-body.js';
import { DEFAULT_MAX_BODY_BYTES } from '../deps.js';
import { refuseTooLarge } from '../request/read-body.js';
import { badPercentEncoding, sendError, type ProxyError } from '../errors.js';
import type { Shared } from '../route/fallback.js';
import { IDENTITY } from '../relay/body-translation.js';
import { startRelay } from '../relay/relay.js';
import { keyRefusal } from '../route/providers.js';
import { RESPONSE_ID } from '../route/response-owners.js';
import { locate } from '../route/targets.js';

const PREFIX = '/v1/responses/';

/**
 * The methods the route table gives what follows a response id (`''`, `cancel`,
 * `input_items`); undefined for anything else. The same for every id, even one that
 * is not well formed (it is refused after the method): asked with a stand-in id.
 */
function methodsAfterId(sub: string): readonly Method[] | undefined {
  const methods = routesAt(`${PREFIX}id${sub === '' ? '' : `/${sub}`}`).map((r) => r.method);
  return methods.length === 0 ? undefined : methods;
}

const notFound = (message: string, code = 'not_found'): ProxyError => ({ status: 404, type: 'invalid_request_error', code, message });

/**
 * The calls on a stored response by its id, which name no model:
 * `GET`/`DELETE /v1/responses/{id}`, `POST …/{id}/cancel` and `GET …/{id}/input_items`
 * (the `openai` client's `responses.retrieve`, `.delete`, `.cancel` and
 * `.inputItems.list`; a background response is polled this way). The admission lets
 * a caller at its own responses only (another's is a 404 as for an id never seen) and
 * names the provider that holds it (response-owners.ts), or `default_provider` for an
 * id the proxy does not know; the call goes there with the client's query
 * (`?stream=true`, paging) and without fallback: no other provider holds that
 * response. None of them takes a body (a cancel's, if sent, is read and dropped), so
 * nothing unchecked reaches the provider.
 */
export function createStoredResponseRoute(admission: Admission, shared: Shared): RequestListener {
  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const [rawId = '', ...rest] = url.slice(PREFIX.length, q === -1 ? undefined : q).split('/');
    const sub = rest.join('/');
    const methods = methodsAfterId(sub);
    if (methods === undefined) {
      // Not a call on a stored response: answered as any unknown path, whatever the method.
      const b = admission.begin(req, res, '/responses/{id}', null, 'openai');
      if (b !== null && admission.enter(b, { from: 'none' }) !== null) sendError(res, b.requestId, notFound(`no route ${req.method ?? ''} ${(url.split('?')[0] ?? '').slice(0, 200)}; a stored response takes GET and DELETE /v1/responses/{id}, POST …/{id}/cancel and GET …/{id}/input_items`), true);
      return;
    }
    const begun = admission.begin(req, res, sub === '' ? '/responses/{id}' : `/responses/{id}/${sub}`, methods, 'openai');
    if (begun === null) return;
    let id: string;
    try {
      id = decodeURIComponent(rawId);
    } catch {
      if (admission.enter(begun, { from: 'none' }) !== null) sendError(res, begun.requestId, badPercentEncoding('response id'), true);
      return;
    }
    // Only ids as servers make them: `.`, `..` or a slash would take the call elsewhere on the provider.
    if (!RESPONSE_ID.test(id) || id === '.' || id === '..') {
      if (admission.enter(begun, { from: 'none' }) !== null) sendError(res, begun.requestId, notFound(`${JSON.stringify(id.slice(0, 200))} is not a response id (letters, digits and _.:-, as "resp_…")`, 'response_not_found'), true);
      return;
    }
    const method = req.method === 'DELETE' || req.method === 'POST' ? req.method : 'GET';
    const enter = (): void => {
      const entered = admission.enter(begun, { from: 'stored-response', id });
      if (entered !== null) send(shared, req, entered, method, id, sub);
    };
    if (method !== 'POST') return enter();
    readBody(req, DEFAULT_MAX_BODY_BYTES, (body) => {
      if (Buffer.isBuffer(body)) enter();
      else if (body.reason === 'too_large') refuseTooLarge(req, res, begun.requestId, body.limit);
    });
  };
}

function send(shared: Shared, req: IncomingMessage, entered: Entered, method: Method, id: string, sub: string): void {
  const { requestId, runtime, obs, res } = entered;
  const owner = entered.holder;
  if (owner === null) throw new Error('a stored response was let in without the provider that holds it');
  obs.provider = owner;
  const entry = runtime.providers.get(owner);
  if (entry === undefined) return sendError(res, requestId, notFound(`response ${JSON.stringify(id)} was created by provider "${owner}", which is no longer configured`, 'response_not_found'));
  const located = locate(entry, 'openai', shared.tunnel);
  if (!located.ok) return sendError(res, requestId, located.error);
  const provider = located.value;
  const refusal = keyRefusal(provider);
  if (refusal !== null) return sendError(res, requestId, refusal);
  void startRelay({
    req,
    res,
    requestId,
    provider,
    pool: shared.pool,
    method,
    payload: null,
    endpoint: `/responses/${encodeURIComponent(id)}${sub === '' ? '' : `/${sub}`}`,
    forwarded: runtime.forwarded,
    family: 'openai',
    // No other provider holds that response: its failures are the client's answer.
    fallible: false,
    observer: obs,
    tunnelHint: () => shared.tunnelHint(provider),
    log: shared.log,
  }, IDENTITY);
}
