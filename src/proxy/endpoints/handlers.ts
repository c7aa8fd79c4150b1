import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAdmission, type Admitted } from './admission.js';
import { readBody } from '../request/read-body.js';
import { applyCors } from '../request/cors.js';
import { DEFAULT_MAX_BODY_BYTES, type ProxyDeps } from '../deps.js';
import { ENDPOINTS, type Endpoint } from '../routes.js';
import { parseModelRequest } from '../request/json-body.js';
import { sendError, type ProxyError } from '../errors.js';
import { sendToTargets, type Shared } from '../route/fallback.js';
import { createModelRoutes } from './model-list.js';
import { createModelCatalog } from '../route/model-catalog.js';
import { readForm, writeForm, type Form } from '../request/multipart.js';
import { observeRequest } from '../observe/request-record.js';
import { runtimeCache, type Target } from '../route/providers.js';
import type { Provider } from '../relay/provider.js';
import { decodeRequestBody } from '../request/body-encoding.js';
import { pickRequestId } from '../request/request-id.js';
import { ResponseOwners } from '../route/response-owners.js';
import { createRests } from '../route/retry-after-rests.js';
import { refuseTooLarge } from '../request/read-body.js';
import { formatMismatch, targetsFor } from '../route/targets.js';
import { createStoredResponseRoute } from './stored-response.js';
import { createUpstreamPool } from '../relay/upstream.js';
import { enter } from '../clients/gate.js';
import { ClientLimiter } from '../clients/limiter.js';
import { speaks, translationFor, type Translation } from '../translate/translation.js';

/** A request handler for plain node:http. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The routes, each taking the node request and response; shared by the node:http handler and the Hono app. */
export interface ProxyRoutes {
  /** One handler per endpoint of ENDPOINTS, by path under /v1. */
  endpoints: ReadonlyMap<string, NodeHandler>;
  /** The same handlers by their whole path (`/v1/chat/completions`), so that a request URL without a query is looked up as it is. */
  byUrlPath: ReadonlyMap<string, NodeHandler>;
  /** GET /v1/models */
  models: NodeHandler;
  /** GET /v1/models/{id} (the id may hold colons and slashes). */
  model: NodeHandler;
  /** /v1/responses/{id} and its subpaths: a stored response, by id. */
  responseById: NodeHandler;
  /** Any other /v1 path: a CORS preflight, or 404. */
  other: NodeHandler;
  /** Closes idle upstream connections (for shutdown). */
  close(): void;
}

/** One request to an endpoint, once admitted. */
interface Incoming extends Admitted {
  req: IncomingMessage;
  res: ServerResponse;
  endpoint: Endpoint;
}

export function createProxyRoutes(deps: ProxyDeps): ProxyRoutes {
  const pool = createUpstreamPool();
  const runtimeOf = runtimeCache(deps.env ?? process.env, deps.log);
  const catalog = createModelCatalog(pool, deps.log);
  const rests = createRests(deps.now);
  const begin = createAdmission(deps, runtimeOf);
  const limiter = new ClientLimiter(deps.now);

  function tunnelHint(p: Provider): string {
    const t = deps.tunnelForLocalEndpoint?.(p.hostname, p.port);
    if (t === undefined) return '';
    const via = `; ${p.hostname}:${p.port} is the local end of tunnel '${t.name}' (${t.hash.slice(0, 8)})`;
    // A running tunnel accepts the connection itself: then the fault is at its far end.
    return t.status === 'RUNNING'
      ? `${via}, which is RUNNING: nothing answers at the tunnel's far end`
      : `${via}, which is ${t.status}, not RUNNING`;
  }

  const shared: Shared = { pool, rests, tunnel: deps.tunnel, tunnelHint, log: deps.log, owners: new ResponseOwners() };

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
      const first = runtime.providers.get(targets.value[0]!.prefix)!;
      r.obs.provider = first.prefix;
      const via = fields === undefined ? null : translationFor(endpoint.path, first);
      if (via !== null) {
        const translated = via.translate(fields!);
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
        const forms = new Map(models.map((m, i) => [m, written[i]!]));
        sendToTargets(shared, { ...r, targets: fit, body: Buffer.alloc(0), forms });
      },
      (e: unknown) => {
        shared.log?.({ event: 'proxy_bug', request_id: r.requestId, error: String(e) });
        sendError(r.res, r.requestId, { status: 500, type: 'server_error', code: 'internal_error', message: 'the upload could not be written out for the provider' });
      },
    );
  }

  const forward = (endpoint: Endpoint): NodeHandler => (req, res) => {
    const begun = begin(req, res, endpoint.path, 'POST', endpoint.family);
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

  const { models, model } = createModelRoutes(begin, catalog, deps.tunnel);

  const other: NodeHandler = (req, res) => {
    const requestId = pickRequestId(req.headers['x-request-id']);
    // One label for every unknown path, so that a scanner cannot grow the series without bound.
    observeRequest({ requestId, endpoint: 'other', res, log: deps.log, metrics: deps.metrics });
    if (applyCors(req, res, runtimeOf(deps.getConfig()).corsOrigins, requestId)) return;
    const path = (req.url ?? '/').split('?')[0]!;
    sendError(res, requestId, notFound(req.method ?? '', path), true, path === '/v1/messages' || path.startsWith('/v1/messages/') ? 'anthropic' : 'openai');
  };

  const endpoints = new Map(ENDPOINTS.map((e) => [e.path, forward(e)]));
  return {
    endpoints,
    byUrlPath: new Map([...endpoints].map(([path, handler]) => [`/v1${path}`, handler])),
    models,
    model,
    responseById: createStoredResponseRoute(begin, shared),
    other,
    close() {
      pool.close();
    },
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

/** The route of a path (query aside) that is none of the endpoints: the models, or `other`. */
export function restOf(routes: ProxyRoutes, path: string): NodeHandler {
  if (path === '/v1/models') return routes.models;
  if (path.startsWith('/v1/models/') && path.length > '/v1/models/'.length) return routes.model;
  if (path.startsWith('/v1/responses/') && path.length > '/v1/responses/'.length) return routes.responseById;
  return routes.other;
}
