import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestListener } from '../../http-listener.js';
import type { Admit, Admitted } from './admission.js';
import { readBody, refuseTooLarge } from '../request/read-body.js';
import { DEFAULT_MAX_BODY_BYTES, type ProxyDeps } from '../deps.js';
import type { Endpoint, Method } from '../routes.js';
import { parseModelRequest } from '../request/json-body.js';
import { sendError } from '../errors.js';
import { sendToTargets, type Shared } from '../route/fallback.js';
import { readForm, writeForm, type Form } from '../request/multipart.js';
import type { Target } from '../route/providers.js';
import { decodeRequestBody } from '../request/body-encoding.js';
import { formatMismatch, targetsFor } from '../route/targets.js';
import { enter } from '../clients/gate.js';
import type { ClientLimiter } from '../clients/limiter.js';
import { speaks, translationFor, type Translation } from '../translate/translation.js';

/** One request to an endpoint, once admitted. */
interface Incoming extends Admitted {
  req: IncomingMessage;
  res: ServerResponse;
  endpoint: Endpoint;
}

/** What the handlers of every route share (one per proxy): endpoints/handlers.ts makes it. */
export interface Context {
  deps: ProxyDeps;
  begin: Admit;
  limiter: ClientLimiter;
  shared: Shared;
}

/**
 * The handler of one endpoint routed by the `model` of its body (POST /v1/chat/completions
 * and the rest of ENDPOINTS): admitted, the body read (and decompressed), checked, and
 * sent to the targets of its model, translated when none of them speaks its format.
 */
export function modelRouted(ctx: Context, endpoint: Endpoint, methods: readonly Method[]): RequestListener {
  const { deps, begin, limiter, shared } = ctx;

  /**
   * The targets of `model` that take the endpoint's format, or null after answering why
   * there are none. With `fields` (a JSON request), targets that take a format the
   * request translates to are the fallback: then the request goes to them, translated.
   */
  function fitting(r: Incoming, model: string, fields?: Record<string, unknown>): { targets: readonly Target[]; translation?: Translation } | null {
    const { runtime, endpoint } = r;
    r.obs.model = model;
    const targets = targetsFor(model, runtime);
    if (!targets.ok) {
      sendError(r.res, r.requestId, targets.error, false, endpoint.family);
      return null;
    }
    const refused = r.client === null ? null : enter(limiter, r.client, model, targets.value, r.res, r.obs);
    if (refused !== null) {
      sendError(r.res, r.requestId, refused, false, endpoint.family);
      return null;
    }
    // Targets that speak the endpoint's format are tried as they are; only when there are none is the request translated.
    const fits = (t: Target): boolean => speaks(runtime.providers.get(t.prefix), endpoint);
    const fit = targets.value.every(fits) ? targets.value : targets.value.filter(fits);
    if (fit.length === 0) {
      // Every target has a provider here (one without would fit: routing answers it).
      const head = targets.value[0];
      const first = head === undefined ? undefined : runtime.providers.get(head.prefix);
      if (first === undefined) {
        sendError(r.res, r.requestId, { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model', message: `model ${JSON.stringify(model.slice(0, 64))} has no target` }, false, endpoint.family);
        return null;
      }
      r.obs.provider = first.prefix;
      const via = fields === undefined ? null : translationFor(endpoint.path, first);
      if (via !== null && fields !== undefined) {
        const translated = via.translate(fields);
        if (!translated.ok) {
          sendError(r.res, r.requestId, translated.error, false, endpoint.family);
          return null;
        }
        const able = targets.value.filter((t) => translationFor(endpoint.path, runtime.providers.get(t.prefix)) === via);
        return { targets: able, translation: translated.value };
      }
      sendError(r.res, r.requestId, formatMismatch(`/v1${endpoint.path}`, endpoint.format, first), false, endpoint.family);
      return null;
    }
    return { targets: fit };
  }

  /** A whole (decompressed) body: checked, then sent to the targets of its model. */
  function route(r: Incoming, body: Buffer): void {
    if (r.endpoint.body === 'multipart') {
      readForm(body, r.req.headers['content-type'], (form) => (form.ok ? routeForm(r, form.value) : sendError(r.res, r.requestId, form.error, false, r.endpoint.family)));
      return;
    }
    const parsed = parseModelRequest(r.endpoint, body);
    if (!parsed.ok) return sendError(r.res, r.requestId, parsed.error, false, r.endpoint.family);
    const fit = fitting(r, parsed.value.model, parsed.value.fields);
    if (fit === null) return;
    const { targets, translation } = fit;
    // A response created with `store: false` is not kept by its provider: no id to note.
    const stored = r.endpoint.path === '/responses' && parsed.value.fields.store !== false && translation === undefined;
    sendToTargets(shared, { req: r.req, res: r.res, requestId: r.requestId, endpoint: r.endpoint, runtime: r.runtime, targets, body: parsed.value.bytes, obs: r.obs, stored, translation });
  }

  function routeForm(r: Incoming, form: Form): void {
    const fitted = fitting(r, form.model);
    if (fitted === null) return;
    const fit = fitted.targets;
    // Every target's form is written before the first is tried: the walk over the targets stays synchronous.
    const models = [...new Set(fit.map((t) => t.model))];
    void Promise.all(models.map((m) => writeForm(form, m))).then(
      (written) => {
        const forms = new Map<string, { bytes: Buffer; contentType: string }>();
        models.forEach((m, i) => {
          const w = written[i];
          if (w !== undefined) forms.set(m, w);
        });
        sendToTargets(shared, { ...r, targets: fit, body: Buffer.alloc(0), forms });
      },
      (e: unknown) => {
        shared.log?.({ event: 'proxy_bug', request_id: r.requestId, error: String(e) });
        sendError(r.res, r.requestId, { status: 500, type: 'server_error', code: 'internal_error', message: 'the upload could not be written out for the provider' });
      },
    );
  }

  return (req, res) => {
    const begun = begin(req, res, endpoint.path, methods, endpoint.family);
    if (begun === null) return;
    const r: Incoming = { req, res, endpoint, requestId: begun.requestId, runtime: begun.runtime, obs: begun.obs, client: begun.client };
    const limit = deps.maxBodyBytes ?? r.runtime.maxBodyBytes ?? endpoint.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
    readBody(req, limit, (body) => {
      if (!Buffer.isBuffer(body)) {
        if (body.reason === 'too_large') {
          refuseTooLarge(req, res, r.requestId, body.limit, endpoint.family);
        } else {
          deps.log?.({ event: 'proxy_client_closed', request_id: r.requestId, stage: 'reading_request' });
        }
        return;
      }
      const encoding = req.headers['content-encoding'];
      if (encoding === undefined) return route(r, body);
      decodeRequestBody(body, encoding, limit, (decoded) => (decoded.ok ? route(r, decoded.value) : sendError(res, r.requestId, decoded.error, false, endpoint.family)));
    });
  };
}
