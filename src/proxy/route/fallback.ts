import type { IncomingMessage, ServerResponse } from 'node:http';
import { withModel } from './model-field.js';
import type { TunnelLookup } from '../deps.js';
import type { Endpoint } from '../routes.js';
import { sendError, type ProxyError } from '../errors.js';
import type { FallbackReason, RelayObserver, RelayRequest, Settled } from '../relay/relay-request.js';
import type { Observation } from '../observe/request-record.js';
import { keyRefusal, type Runtime, type Target } from './providers.js';
import type { Provider } from '../relay/provider.js';
import type { Rests } from './retry-after-rests.js';
import { IDENTITY } from '../relay/body-translation.js';
import { headerOf } from '../relay/client-headers.js';
import { startRelay } from '../relay/relay.js';
import { notingOwner, type ResponseOwner, type ResponseOwners } from './response-owners.js';
import { locate } from './targets.js';
import type { Translation } from '../translate/translation.js';
import type { UpstreamPool } from '../relay/upstream.js';

/** What every request's walk over its targets shares (one object per proxy). */
export interface Shared {
  pool: UpstreamPool;
  rests: Rests;
  tunnel: TunnelLookup | undefined;
  tunnelHint(p: Provider): string;
  log?(entry: Record<string, unknown>): void;
  /** Who created each stored response (noted from `/v1/responses` answers). */
  owners: ResponseOwners;
}

/** One request on its way to the targets of its model name. */
export interface RoutedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  endpoint: Endpoint;
  runtime: Runtime;
  /** Targets that take the endpoint's format, in order. */
  targets: readonly Target[];
  /** The client's body; each target gets it with `model` replaced by its bare model name. */
  body: Buffer;
  /** Whether the answer is a response the provider keeps (`/v1/responses` without `store: false`): its id is noted. */
  stored?: boolean;
  /** A multipart upload: the form each bare model name gets, written out (instead of `body`). */
  forms?: ReadonlyMap<string, { bytes: Buffer; contentType: string }>;
  obs: Observation;
  /** The request in another format than the endpoint's, for providers that speak that one (translate/); it writes each target's body. */
  translation?: Translation;
}

const reasonOf = (why: FallbackReason): string =>
  why.kind === 'status' ? (why.status === 429 ? 'status_429' : 'status_5xx') : why.kind;

/**
 * Sends the request to its targets in order until one answers. The next target is
 * tried when one cannot be reached, does not answer within its timeout, answers 429
 * or 5xx, rests after its `Retry-After`, or is a tunnel that is not RUNNING — always
 * before a byte reached the client, so the client sees one answer. The last target's
 * failure is the client's answer; the last target is asked even while it rests.
 *
 * The walk starts a relay per target and hears how it settled; the relay knows
 * nothing of the walk (dependencies and calls run one way: route → relay).
 */
export function sendToTargets(shared: Shared, a: RoutedRequest): void {
  new TargetWalk(shared, a).attempt(0);
}

const NO_PROVIDER_YET = { prefix: '' };

/** The walk over one request's targets. */
class TargetWalk {
  private index = 0;
  private lastRefusal: ProxyError | null = null;
  /** Targets passed over only because they rest, in order: asked after all when no other could be. */
  private readonly passedResting: number[] = [];
  /** Set when a resting target is asked as the last resort: its answer is the client's. */
  private lastResort = false;
  /** The provider being tried, whose answer notes a stored response's owner (response-owners.ts). */
  private provider: { readonly prefix: string } = NO_PROVIDER_YET;
  readonly res: ServerResponse;
  private readonly observer: RelayObserver;
  private readonly onSettled = (s: Settled): void => this.settled(s);

  constructor(
    private readonly shared: Shared,
    private readonly a: RoutedRequest,
  ) {
    this.res = a.res;
    this.observer = a.stored === true ? notingOwner(a.obs, shared.owners, this) : a.obs;
  }

  /** Who makes the response being asked for: the request's client, with the target being tried. */
  owner(): ResponseOwner {
    const target = this.a.targets[this.index];
    return { provider: this.provider.prefix, client: this.a.obs.client, model: target === undefined ? '' : `${target.prefix}:${target.model}` };
  }

  attempt(i: number): void {
    const { a } = this;
    if (a.res.destroyed) return;
    this.index = i;
    const target = a.targets[i];
    if (target === undefined) {
      // Every other target refused before an exchange: a resting one is asked after all,
      // so that a client's retry reaches a provider instead of a refusal made up here.
      const resting = this.passedResting.shift();
      if (resting !== undefined) {
        this.lastResort = true;
        this.attempt(resting);
        return;
      }
      sendError(a.res, a.requestId, this.lastRefusal ?? { status: 502, type: 'upstream_error', code: 'upstream_unreachable', message: 'no target could be reached' }, false, a.endpoint.family);
      return;
    }
    const entry = a.runtime.providers.get(target.prefix);
    if (entry === undefined) return this.next('unknown', { status: 404, type: 'invalid_request_error', code: 'model_not_found', message: `no provider "${target.prefix}"` });
    a.obs.provider = target.prefix;
    // A rest only sends the request to another target. The last one is always asked: a
    // client that retries when the provider said to (after Retry-After, or its own
    // backoff) reaches it, instead of a refusal made up here for a provider that may
    // be well again (SPEC §9: clients' retries are theirs).
    const resting = this.last ? 0 : this.shared.rests.left(target.prefix);
    if (resting > 0) {
      this.passedResting.push(i);
      const seconds = Math.ceil(resting / 1000);
      return this.next('resting', {
        status: 503,
        type: 'upstream_error',
        code: 'provider_resting',
        message: `provider "${target.prefix}" asked for a pause (Retry-After) and takes requests again in ${seconds} s`,
        retryAfterSeconds: seconds,
      });
    }
    const located = locate(entry, a.translation?.format ?? a.endpoint.format, this.shared.tunnel);
    if (!located.ok) return this.next('tunnel_down', located.error);
    const provider = located.value;
    const refusal = keyRefusal(provider);
    if (refusal !== null) return this.next('key_unusable', refusal);
    this.provider = provider;
    const form = a.forms?.get(target.model);
    const { shared } = this;
    const relay: RelayRequest = {
      req: a.req,
      res: a.res,
      requestId: a.requestId,
      provider,
      pool: shared.pool,
      payload: form !== undefined ? form.bytes : a.translation !== undefined ? a.translation.payloadFor(target.model) : withModel(a.body, target.model),
      contentType: form?.contentType,
      endpoint: a.endpoint.path,
      forwarded: a.runtime.forwarded,
      family: a.endpoint.family,
      fallible: !this.last,
      observer: this.observer,
      tunnelHint: () => shared.tunnelHint(provider),
      log: shared.log,
    };
    // The translation, when there is one, is the relay's plug for the answer (relay/body-translation.ts).
    void startRelay(relay, a.translation ?? IDENTITY).then(this.onSettled);
  }

  private get last(): boolean {
    return this.lastResort || this.index === this.a.targets.length - 1;
  }

  /** The current target refused before any exchange: on to the next, or this is the answer. */
  private next(reason: string, refusal: ProxyError): void {
    const { a } = this;
    const i = this.index;
    this.lastRefusal = refusal;
    if (!this.last) {
      const prefix = a.targets[i]?.prefix;
      a.obs.fellBack(prefix ?? '', reason);
      this.log({ event: 'proxy_fallback', request_id: a.requestId, provider: prefix, reason, next: a.targets[i + 1]?.prefix, why: refusal.message });
    }
    // A last resort that refuses ends the walk (with the refusal); it never walks on.
    this.attempt(this.lastResort ? this.a.targets.length : i + 1);
  }

  private log(entry: Record<string, unknown>): void {
    this.shared.log?.(entry);
  }

  /** How the relay of the current target settled: a 429 or 5xx rests its provider as it asked; a declined request goes on to the next target. */
  private settled(s: Settled): void {
    const { a } = this;
    const i = this.index;
    const prefix = a.targets[i]?.prefix ?? '';
    const why = s.kind === 'declined' ? s.why : null;
    const status = s.kind === 'answered' ? s : why?.kind === 'status' ? why : null;
    if (status !== null && (status.status === 429 || status.status >= 500)) {
      this.shared.rests.note(prefix, headerOf(status.rawHeaders, 'retry-after'), headerOf(status.rawHeaders, 'retry-after-ms'));
    }
    if (why === null || a.res.destroyed) return;
    a.obs.fellBack(prefix, reasonOf(why));
    const detail = why.kind === 'status' ? { status: why.status } : why.kind === 'unreachable' ? { error: why.code } : {};
    this.log({ event: 'proxy_fallback', request_id: a.requestId, provider: prefix, reason: reasonOf(why), ...detail, next: a.targets[i + 1]?.prefix });
    this.attempt(i + 1);
  }
}
