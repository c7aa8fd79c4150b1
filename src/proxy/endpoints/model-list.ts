import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestListener } from '../../edge/http-listener.js';
import { modelNotFound, type Admission } from './admission.js';
import { errorFamilyOf, type Method } from '../routes.js';
import type { TunnelLookup } from '../deps.js';
import { err, type Result } from '../../kernel/result.js';
import { badPercentEncoding, invalidRequest, sendError, type ErrorFamily, type ProxyError } from '../errors.js';
import { markOwnAnswer } from '../observe/own-answer.js';
import type { ModelCatalog, ModelEntry } from '../route/model-catalog.js';
import type { Runtime } from '../route/providers.js';
import { targetsFor } from '../route/targets.js';
import { allows, type ClientRule } from '../clients/rules.js';

/**
 * The models a caller may use, by the rule that admits its requests: a client of
 * `proxy.clients` sees only its own (a model it may not use is as unknown to it as one
 * no provider has); shared keys and an open proxy see every model.
 */
function visibleTo(client: ClientRule | null, runtime: Runtime, data: readonly ModelEntry[]): readonly ModelEntry[] {
  if (client === null || client.matchers === null) return data;
  return data.filter((m) => {
    const targets = targetsFor(m.id, runtime);
    return allows(client, m.id, targets.ok ? targets.value : []);
  });
}

/**
 * `GET /v1/models` and `GET /v1/models/{id}`, in the shape of the client that asks:
 * OpenAI's list (`{"object": "list", "data": [...]}`) by default, Anthropic's
 * (`{"data", "has_more", "first_id", "last_id"}`, paged by `limit`, `after_id` and
 * `before_id`, entries with `type`, `display_name` and `created_at`) when the request
 * carries `anthropic-version`, which Anthropic's SDKs send on every call and OpenAI's
 * never do. The same models either way.
 */
export function createModelRoutes(
  admission: Admission,
  catalog: ModelCatalog,
  tunnel: TunnelLookup | undefined,
  methods: { list: readonly Method[]; one: readonly Method[] },
): { models: RequestListener; model: RequestListener } {
  const familyOf = (req: IncomingMessage): ErrorFamily => errorFamilyOf('/v1/models', req.headers['anthropic-version']);

  const models: RequestListener = (req, res) => {
    const family = familyOf(req);
    const begun = admission.begin(req, res, '/models', methods.list, family);
    if (begun === null || admission.enter(begun, { from: 'listed' }) === null) return;
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    void catalog.list(begun.runtime, tunnel).then((all) => {
      const data = visibleTo(begun.client, begun.runtime, all);
      if (family === 'openai') return answerJson(req, res, begun.requestId, { object: 'list', data });
      const page = anthropicPage(data, query);
      if (!page.ok) return sendError(res, begun.requestId, page.error, false, family);
      answerJson(req, res, begun.requestId, page.value);
    });
  };

  const model: RequestListener = (req, res) => {
    const family = familyOf(req);
    const begun = admission.begin(req, res, '/models/{id}', methods.one, family);
    if (begun === null) return;
    const url = req.url ?? '';
    const rest = url.slice(url.indexOf('/models/') + '/models/'.length).split('?')[0] ?? '';
    let id: string;
    try {
      id = decodeURIComponent(rest);
    } catch {
      if (admission.enter(begun, { from: 'none' }) !== null) sendError(res, begun.requestId, badPercentEncoding('model id'), false, family);
      return;
    }
    begun.obs.model = id;
    // A model the client may not use is refused by the admission as one no provider has.
    if (admission.enter(begun, { from: 'path', model: id }) === null) return;
    void catalog.list(begun.runtime, tunnel).then((all) => {
      const found = all.find((m) => m.id === id);
      if (found !== undefined) return answerJson(req, res, begun.requestId, family === 'openai' ? found : anthropicModel(found));
      sendError(res, begun.requestId, modelNotFound(id), false, family);
    });
  };

  return { models, model };
}

function answerJson(req: IncomingMessage, res: ServerResponse, requestId: string, value: unknown): void {
  if (res.destroyed) return;
  const body = JSON.stringify(value);
  markOwnAnswer(res);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': requestId });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** One model as Anthropic's API describes it; an Anthropic provider's own name and date for it are kept. */
export function anthropicModel(m: ModelEntry): { type: 'model'; id: string; display_name: string; created_at: string } {
  const name = typeof m.display_name === 'string' ? m.display_name : m.id;
  const at = typeof m.created_at === 'string' ? m.created_at : new Date(m.created * 1000).toISOString().replace('.000Z', 'Z');
  return { type: 'model', id: m.id, display_name: name, created_at: at };
}

// Anthropic's API: 20 models a page unless `limit` (1 to 1000) says otherwise.
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** One page of Anthropic's model list: after `after_id` or before `before_id`, at most `limit` entries. */
export function anthropicPage(all: readonly ModelEntry[], query: URLSearchParams): Result<unknown, ProxyError> {
  const bad = (message: string, param: string): Result<never, ProxyError> => err(invalidRequest(message, param));
  const limitText = query.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : /^[0-9]{1,4}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) return bad(`limit must be a whole number from 1 to ${MAX_LIMIT}, found ${JSON.stringify(limitText)}`, 'limit');
  const after = query.get('after_id');
  const before = query.get('before_id');
  let from = 0;
  let to = all.length;
  if (after !== null) {
    const i = all.findIndex((m) => m.id === after);
    if (i === -1) return bad(`after_id ${JSON.stringify(after.slice(0, 200))} is not a listed model`, 'after_id');
    from = i + 1;
  }
  if (before !== null) {
    const i = all.findIndex((m) => m.id === before);
    if (i === -1) return bad(`before_id ${JSON.stringify(before.slice(0, 200))} is not a listed model`, 'before_id');
    to = i;
  }
  // Paging backwards (before_id alone) gives the entries just before it, as Anthropic's does.
  const window = all.slice(from, to);
  const data = (before !== null && after === null ? window.slice(-limit) : window.slice(0, limit)).map(anthropicModel);
  return { ok: true, value: { data, has_more: window.length > limit, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null } };
}
