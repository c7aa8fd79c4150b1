import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyConfig } from '../../config/proxy-schema.js';
import { err, ok, type Result } from '../../kernel/result.js';
import { clientAuthorization } from '../clients/api-keys.js';
import { callerOf, modelRefusal, takePlace } from '../clients/gate.js';
import type { ClientLimiter } from '../clients/limiter.js';
import { allows, allowsWholeProvider, type ClientRule } from '../clients/rules.js';
import { applyCors } from '../request/cors.js';
import type { ProxyDeps } from '../deps.js';
import { sendError, type ErrorFamily, type ProxyError } from '../errors.js';
import { observeRequest, type Observation } from '../observe/request-record.js';
import { splitModel } from '../route/model-field.js';
import type { Runtime, Target } from '../route/providers.js';
import { MAX_OWNERS, type ResponseOwners } from '../route/response-owners.js';
import { targetsFor } from '../route/targets.js';
import { pickRequestId } from '../request/request-id.js';
import type { Method, ModelSource } from '../routes.js';

/**
 * The one admission of every `/v1` request (SPEC §9b), in two steps:
 *
 *   begin: id and record → CORS → method → key (401)        before the body is read
 *   enter: the model, from where the route's table entry     once the model is known
 *          says it comes (403 / 404) → the client's limits (429)
 *
 * A route's handler gets an `Entered` request only from `enter`, and only an `Entered`
 * request is sent to a provider (model-routed.ts, stored-response.ts); what the group
 * answers itself (the model list, an unknown path's 404) is entered just the same, so
 * a client over its limits is refused everywhere alike.
 */

/** A request whose key was taken: its id, the configuration in force when it arrived, its record and its client. */
export interface Admitted {
  requestId: string;
  runtime: Runtime;
  obs: Observation;
  /** The client of `proxy.clients` whose key it came with, or null (no keys, or one of `api_keys`). */
  client: ClientRule | null;
  res: ServerResponse;
  /** Whose error shape the request is answered in. */
  family: ErrorFamily;
}

declare const ENTERED: unique symbol;

/** A request let through the whole admission; only `enter` makes one. */
export type Entered = Admitted & {
  readonly [ENTERED]: true;
  /** For a stored response: the provider that holds it. Null for every other claim. */
  readonly holder: string | null;
};

/** A model a body names, with its targets (route/targets.ts). */
interface ModelClaim {
  model: string;
  targets: readonly Target[];
  /** The stored response a Responses API request builds on (`previous_response_id`), which must be the caller's. */
  continues?: string | undefined;
}

/**
 * What each source of a model (routes.ts' ModelSource) gives the admission to check,
 * and `none` for an answer the group makes itself that names no model: a path that is
 * no route (files, batches, …), an id in a path that is not well formed. Indexed by
 * every source, so that a source without a claim does not compile.
 */
interface ClaimOf {
  body: ModelClaim;
  form: ModelClaim;
  /** A model id in the path: one the client may not use is as unknown to it as one no provider has. */
  path: { model: string };
  /** A stored response by id: the caller's own, or one the proxy does not know that may go to `default_provider`. */
  'stored-response': { id: string };
  /** Every model the client may use (its handler filters the list). */
  listed: object;
  none: object;
}

/** What a request's model turned out to be, by the source its route declares. */
export type Claim = { [S in ModelSource | 'none']: { from: S } & ClaimOf[S] }[ModelSource | 'none'];

export interface Admission {
  /**
   * What every route does first, in this order: an id and a record (so that even a
   * refused request has its log line), CORS (a preflight is answered here), the method
   * (one, several, or null for a path that answers any), then the client's key. GET
   * takes HEAD too. Null when it already answered.
   */
  begin(req: IncomingMessage, res: ServerResponse, endpoint: string, method: Method | readonly Method[] | null, family: ErrorFamily): Admitted | null;
  /** The rest, once the model is known: the model (or stored response) checked, then a place taken within the client's limits. Null when it already answered. */
  enter(a: Admitted, claim: Claim): Entered | null;
}

function allowsMethod(method: Method | readonly Method[], asked: string | undefined): boolean {
  if (typeof method === 'string') return asked === method || (method === 'GET' && asked === 'HEAD');
  return method.some((m) => allowsMethod(m, asked));
}

/** The 404 of a model id that is not among the models the caller sees. */
export function modelNotFound(id: string): ProxyError {
  return { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model', message: `no model ${JSON.stringify(id.slice(0, 200))} among the providers' models and the aliases (GET /v1/models lists them)` };
}

export function createAdmission(deps: ProxyDeps, runtimeOf: (config: ProxyConfig | null) => Runtime, limiter: ClientLimiter, owners: ResponseOwners): Admission {
  /** Who a stored response is to the caller: its own (and where it is), unknown to the proxy, or someone else's. */
  function ownership(a: Admitted, id: string): { kind: 'own'; provider: string; model: string } | { kind: 'unknown' } | { kind: 'other' } {
    const owner = owners.ownerOf(id);
    if (owner === undefined) return { kind: 'unknown' };
    return owner.client === (a.client?.name ?? null) ? { kind: 'own', provider: owner.provider, model: owner.model } : { kind: 'other' };
  }

  /**
   * Whether a response the proxy does not know may be looked for on provider `prefix`
   * by this caller: the proxy cannot tell whose it is (made before a restart, or
   * forgotten among more than MAX_OWNERS), so only by a key that may use every model
   * of that provider anyway — a shared key, a client without `models`, or one with a
   * pattern such as `gpu1:*`.
   */
  const mayLookFor = (a: Admitted, prefix: string): boolean => a.client === null || allowsWholeProvider(a.client, prefix);

  /**
   * The 404 for a response that is not the caller's: the same words whether another
   * client made it or none did, so that the answer tells nothing of other clients.
   */
  function responseNotFound(a: Admitted, id: string): ProxyError {
    const fallback = a.runtime.defaultProvider;
    const why =
      fallback === null
        ? '; set proxy.default_provider to send calls on other responses to one provider'
        : mayLookFor(a, fallback)
          ? ''
          : `; calls on other responses go to proxy.default_provider ("${fallback}") only with a key that may use all of its models`;
    return {
      status: 404,
      type: 'invalid_request_error',
      code: 'response_not_found',
      message: `no response ${JSON.stringify(id)} made with this key has passed through this proxy since it started (it knows who made the last ${MAX_OWNERS} responses it relayed)${why}`,
    };
  }

  /** The claim checked against what the caller may use: where a stored response is held, or why not. */
  function check(a: Admitted, claim: Claim): Result<string | null, ProxyError> {
    const client = a.client;
    switch (claim.from) {
      case 'body':
      case 'form': {
        const refused = client === null ? null : modelRefusal(client, claim.model, claim.targets);
        if (refused !== null) return err(refused);
        if (claim.continues === undefined) return ok(null);
        const whose = ownership(a, claim.continues);
        const reachable = whose.kind === 'own' || (whose.kind === 'unknown' && claim.targets.every((t) => mayLookFor(a, t.prefix)));
        if (reachable) return ok(null);
        return err({
          status: 400,
          type: 'invalid_request_error',
          code: 'previous_response_not_found',
          param: 'previous_response_id',
          message: `previous response ${JSON.stringify(claim.continues.slice(0, 200))} was not made with this key through this proxy since it started, and a response the proxy does not know is looked for only with a key that may use all of the provider's models`,
        });
      }
      case 'path': {
        if (client === null) return ok(null);
        const targets = targetsFor(claim.model, a.runtime);
        return allows(client, claim.model, targets.ok ? targets.value : []) ? ok(null) : err(modelNotFound(claim.model));
      }
      case 'stored-response': {
        const whose = ownership(a, claim.id);
        if (whose.kind === 'own') {
          // Its own response: no secret to it, but a model taken off its list is refused as on any route.
          const target = splitModel(whose.model);
          const refused = client === null ? null : modelRefusal(client, whose.model, target === null ? [] : [target]);
          return refused === null ? ok(whose.provider) : err(refused);
        }
        const fallback = a.runtime.defaultProvider;
        if (whose.kind === 'unknown' && fallback !== null && mayLookFor(a, fallback)) return ok(fallback);
        return err(responseNotFound(a, claim.id));
      }
      case 'listed':
      case 'none':
        return ok(null);
      default: {
        const never: never = claim;
        throw new Error(`no admission for a claim ${JSON.stringify(never)}`);
      }
    }
  }

  return {
    begin(req, res, endpoint, method, family) {
      const requestId = pickRequestId(req.headers['x-request-id']);
      const obs = observeRequest({ requestId, endpoint, res, log: deps.log, metrics: deps.metrics });
      const runtime = runtimeOf(deps.getConfig());
      if (applyCors(req, res, runtime.corsOrigins, requestId)) return null;
      if (method !== null && !allowsMethod(method, req.method)) {
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
      return { requestId, runtime, obs, client: caller.client, res, family };
    },

    enter(a, claim) {
      const checked = check(a, claim);
      const refused = !checked.ok ? checked.error : a.client === null ? null : takePlace(limiter, a.client, a.res, a.obs);
      if (refused !== null) {
        sendError(a.res, a.requestId, refused, false, a.family);
        return null;
      }
      return { ...a, holder: checked.ok ? checked.value : null } as Entered;
    },
  };
}
