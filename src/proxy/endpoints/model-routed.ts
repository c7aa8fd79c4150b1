import type { IncomingMessage } from 'node:http';
import type { RequestListener } from '../../edge/http-listener.js';
import type { Admission, Admitted, Entered } from './admission.js';
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
import { duplicateModel } from '../route/model-field.js';
import { speaks, translationFor, type Translation } from '../translate/translation.js';

/** One request to an endpoint, once its key was taken. */
interface Incoming extends Admitted {
  req: IncomingMessage;
  endpoint: Endpoint;
}

/** What the handlers of every route share (one per proxy): endpoints/handlers.ts makes it. */
export interface Context {
  deps: ProxyDeps;
  admission: Admission;
  shared: Shared;
}

/** The Responses API's requests that may build on a stored response (`previous_response_id`). */
const continuesResponse = (endpoint: Endpoint): boolean => endpoint.path === '/responses' || endpoint.path.startsWith('/responses/');

/**
 * The handler of one endpoint routed by the `model` of its body (POST /v1/chat/completions
 * and the rest of ENDPOINTS): admitted, the body read (and decompressed), checked, and
 * sent to the targets of its model, translated when none of them speaks its format.
 */
export function modelRouted(ctx: Context, endpoint: Endpoint, methods: readonly Method[]): RequestListener {
  const { deps, admission, shared } = ctx;

  /**
   * The request let through the admission with the targets of `model` that take the
   * endpoint's format, or null after answering why not. With `fields` (a JSON request),
   * targets that take a format the request translates to are the fallback: then the
   * request goes to them, translated.
   */
  function fitting(r: Incoming, model: string, fields?: Record<string, unknown>): { entered: Entered; targets: readonly Target[]; translation?: Translation } | null {
    const { runtime, endpoint } = r;
    r.obs.model = model;
    const targets = targetsFor(model, runtime);
    if (!targets.ok) {
      sendError(r.res, r.requestId, targets.error, false, endpoint.family);
      return null;
    }
    const previous = fields !== undefined && continuesResponse(endpoint) ? fields.previous_response_id : undefined;
    const entered = admission.enter(r, { from: endpoint.model, model, targets: targets.value, continues: typeof previous === 'string' ? previous : undefined });
    if (entered === null) return null;
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
        return { entered, targets: able, translation: translated.value };
      }
      sendError(r.res, r.requestId, formatMismatch(`/v1${endpoint.path}`, endpoint.format, first), false, endpoint.family);
      return null;
    }
    return { entered, targets: fit };
  }

  /** A whole (decompressed) body: checked, then sent to the targets of its model. */
  function route(r: Incoming, body: Buffer): void {
    if (r.endpoint.model === 'form') {
      readForm(body, r.req.headers['content-type'], (form) => (form.ok ? routeForm(r, form.value) : sendError(r.res, r.requestId, form.error, false, r.endpoint.family)));
      return;
    }
    const parsed = parseModelRequest(r.endpoint, body);
    if (!parsed.ok) return sendError(r.res, r.requestId, parsed.error, false, r.endpoint.family);
    const twice = duplicateModel(parsed.value.bytes);
    if (twice !== null) return sendError(r.res, r.requestId, twice, false, r.endpoint.family);
    const fit = fitting(r, parsed.value.model, parsed.value.fields);
    if (fit === null) return;
    const { entered, targets, translation } = fit;
    // A response created with `store: false` is not kept by its provider: no id to note.
    const stored = r.endpoint.path === '/responses' && parsed.value.fields.store !== false && translation === undefined;
    sendToTargets(shared, { req: r.req, res: entered.res, requestId: entered.requestId, endpoint: r.endpoint, runtime: entered.runtime, targets, body: parsed.value.bytes, obs: entered.obs, stored, translation });
  }

  function routeForm(r: Incoming, form: Form): void {
    const fitted = fitting(r, form.model);
    if (fitted === null) return;
    const { entered, targets: fit } = fitted;
    // Every target's form is written before the first is tried: the walk over the targets stays synchronous.
    const models = [...new Set(fit.map((t) => t.model))];
    void Promise.all(models.map((m) => writeForm(form, m))).then(
      (written) => {
        const forms = new Map<string, { bytes: Buffer; contentType: string }>();
        models.forEach((m, i) => {
          const w = written[i];
          if (w !== undefined) forms.set(m, w);
        });
        sendToTargets(shared, { req: r.req, res: entered.res, requestId: entered.requestId, endpoint: r.endpoint, runtime: entered.runtime, obs: entered.obs, targets: fit, body: Buffer.alloc(0), forms });
      },
      (e: unknown) => {
        shared.log?.({ event: 'proxy_bug', request_id: r.requestId, error: String(e) });
        sendError(r.res, r.requestId, { status: 500, type: 'server_error', code: 'internal_error', message: 'the upload could not be written out for the provider' });
      },
    );
  }

  return (req, res) => {
    const begun = admission.begin(req, res, endpoint.path, methods, endpoint.family);
    if (begun === null) return;
    const r: Incoming = { ...begun, req, endpoint };
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
