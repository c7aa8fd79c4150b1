import type { ProviderFormat } from '../config/proxy-schema.js';
import type { ErrorFamily } from './errors.js';

/** One POST endpoint routed by the `model` its body names; the table below is the whole list. */
export interface Endpoint {
  /** The path under `/v1`, the same on the provider (under its base path); also the `endpoint` of log lines and metrics. */
  path: string;
  /** The request format: only providers that take it get the request. */
  format: ProviderFormat;
  /** Whose error shape the endpoint's clients read. */
  family: ErrorFamily;
  /** Fields besides `model` the proxy itself relies on (everything else is the provider's to judge). */
  lists?: readonly string[];
  /**
   * Where its model comes from, and so what its body is: the `model` member of a JSON
   * body (request/json-body.ts), or the `model` field of a multipart/form-data upload
   * (request/multipart.ts). Required: an endpoint cannot be declared without it.
   */
  model: 'body' | 'form';
  /** The largest body taken, when not the proxy's default (16 MiB). */
  maxBytes?: number;
}

// OpenAI's own limit for an audio upload; vLLM's default is the same.
const AUDIO_UPLOAD_BYTES = 25 * 1024 * 1024;

export const ENDPOINTS: readonly Endpoint[] = [
  { path: '/chat/completions', format: 'openai', family: 'openai', model: 'body', lists: ['messages'] },
  { path: '/responses', format: 'openai', family: 'openai', model: 'body' },
  // The Responses API's token count and compaction (`responses.inputTokens.count`, `responses.compact`).
  { path: '/responses/input_tokens', format: 'openai', family: 'openai', model: 'body' },
  { path: '/responses/compact', format: 'openai', family: 'openai', model: 'body' },
  { path: '/embeddings', format: 'openai', family: 'openai', model: 'body' },
  { path: '/completions', format: 'openai', family: 'openai', model: 'body' },
  // The other JSON endpoints of OpenAI's API that model servers serve (vLLM, LocalAI,
  // llama.cpp, text-embeddings-inference), and vLLM's and Jina's rerank and score.
  { path: '/moderations', format: 'openai', family: 'openai', model: 'body' },
  { path: '/images/generations', format: 'openai', family: 'openai', model: 'body' },
  { path: '/audio/speech', format: 'openai', family: 'openai', model: 'body' },
  { path: '/rerank', format: 'openai', family: 'openai', model: 'body' },
  { path: '/score', format: 'openai', family: 'openai', model: 'body' },
  // Uploads: the audio file and `model` are form fields (Whisper on vLLM, LocalAI, faster-whisper servers).
  { path: '/audio/transcriptions', format: 'openai', family: 'openai', model: 'form', maxBytes: AUDIO_UPLOAD_BYTES },
  { path: '/audio/translations', format: 'openai', family: 'openai', model: 'form', maxBytes: AUDIO_UPLOAD_BYTES },
  { path: '/messages', format: 'anthropic', family: 'anthropic', model: 'body', lists: ['messages'] },
  // What Anthropic's SDK (messages.countTokens) and Claude Code call before a long prompt.
  { path: '/messages/count_tokens', format: 'anthropic', family: 'anthropic', model: 'body', lists: ['messages'] },
];

/** A method of the table; a route with GET answers HEAD too. */
export type Method = 'GET' | 'POST' | 'DELETE';

/**
 * Where a route's model comes from: what the admission (endpoints/admission.ts) checks
 * against a client's models before anything of the request reaches a provider, and so
 * which handler of endpoints/ answers the route.
 * - `body`, `form`: the `model` its body names (an Endpoint of the table above);
 * - `path`: the model id in the path (`GET /v1/models/{id}`);
 * - `stored-response`: the stored response's, as noted when it was created: the client
 *   and the model that made it (route/response-owners.ts);
 * - `listed`: every model the client may use (`GET /v1/models`, a list filtered per client).
 */
export type ModelSource = Endpoint['model'] | 'path' | 'stored-response' | 'listed';

interface RouteBase {
  method: Method;
  /**
   * The whole path. `{id}` stands for one path segment, `{id*}` for the rest of the
   * path (a model id may hold slashes); the rest is literal.
   */
  path: string;
}

/**
 * One route of the `/v1` group. `model` is required, and a route whose model its body
 * names carries its endpoint: the compiler refuses a route that does not say where its
 * model comes from.
 */
export type Route = (RouteBase & { model: Endpoint['model']; endpoint: Endpoint }) | (RouteBase & { model: Exclude<ModelSource, Endpoint['model']> });

/**
 * Every route of the `/v1` group: the one table from which the daemon's fast path,
 * `tunnel-manager proxy` and the Hono sub-app dispatch (dispatch.ts), and from which
 * each route learns the methods it takes (a 405 with `Allow` for any other). A path
 * under `/v1` that matches none is answered 404 by the group itself (a CORS preflight
 * aside, and after the admission's key check), so a client learns it asked the proxy
 * for something it lacks.
 */
export const ROUTES: readonly Route[] = [
  ...ENDPOINTS.map((endpoint): Route => ({ method: 'POST', path: `/v1${endpoint.path}`, model: endpoint.model, endpoint })),
  { method: 'GET', path: '/v1/models', model: 'listed' },
  { method: 'GET', path: '/v1/models/{id*}', model: 'path' },
  // A stored response, by id (`responses.retrieve`, `.delete`, `.cancel`, `.inputItems.list`).
  { method: 'GET', path: '/v1/responses/{id}', model: 'stored-response' },
  { method: 'DELETE', path: '/v1/responses/{id}', model: 'stored-response' },
  { method: 'POST', path: '/v1/responses/{id}/cancel', model: 'stored-response' },
  { method: 'GET', path: '/v1/responses/{id}/input_items', model: 'stored-response' },
];

/**
 * Whose error shape a request under `/v1` is answered in, wherever the answer comes
 * from (a route, the 404 of a path the group lacks, the listener's browser guard): an
 * endpoint's own family at its path and below it (`/v1/messages/…` is Anthropic's);
 * elsewhere Anthropic's when the request carries `anthropic-version`, which Anthropic's
 * SDKs send on every call and OpenAI's never do.
 */
export function errorFamilyOf(path: string, anthropicVersion: string | string[] | undefined): ErrorFamily {
  for (const e of ENDPOINTS) {
    const at = `/v1${e.path}`;
    if (path === at || path.startsWith(`${at}/`)) return e.family;
  }
  return anthropicVersion === undefined ? 'openai' : 'anthropic';
}

/** A route's path as its requests are labelled in logs and series: under `/v1`, `{id*}` as `{id}`. */
export function routeLabel(route: Pick<Route, 'path'>): string {
  return route.path.slice('/v1'.length).replace('{id*}', '{id}');
}

/** Whether `path` (no query) is one the pattern stands for. */
export function matches(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const got = path.split('/');
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    const g = got[i];
    if (g === undefined || w === undefined) return false;
    if (w.endsWith('*}')) return got.slice(i).join('/') !== '';
    if (w.startsWith('{') ? g === '' : w !== g) return false;
  }
  return got.length === want.length;
}

/** The routes at `path` (no query), in table order; none for a path the group lacks. */
export function routesAt(path: string): Route[] {
  return ROUTES.filter((r) => matches(r.path, path));
}
