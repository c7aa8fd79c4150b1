import http from 'node:http';
import https from 'node:https';
import type { Result } from '../result.js';
import type { Provider, Runtime } from './providers.js';

/** One entry of `GET /v1/models`, in OpenAI's shape. */
export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

// Listing is a convenience call: a provider that hangs must not hold the list for
// its full chat timeout (the provider's timeout applies when shorter), and the answers are reused for a few seconds.
const LIST_TIMEOUT_MS = 5_000;
const FRESH_MS = 10_000;
const FAILED_FRESH_MS = 2_000;
const MAX_LIST_BYTES = 8 * 1024 * 1024;

type Listing = Result<ModelEntry[], string>;

/** Fetches, caches and merges the providers' model lists; a provider that fails is left out, not fatal. */
export function createModelCatalog(log?: (entry: Record<string, unknown>) => void) {
  const cache = new Map<string, Promise<Listing>>();

  function listingOf(p: Provider): Promise<Listing> {
    const key = `${p.prefix}\n${p.target.protocol}//${p.hostname}:${p.port}${p.basePath}\n${p.authorization.ok ? p.authorization.value : ''}`;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const listing = fetchModels(p).then((result) => {
      // Failures are remembered for less time, so a provider that comes back shows up soon.
      const ttl = result.ok ? FRESH_MS : FAILED_FRESH_MS;
      setTimeout(() => cache.get(key) === listing && cache.delete(key), ttl).unref();
      if (!result.ok) log?.({ event: 'proxy_models_failed', provider: p.prefix, error: result.error });
      return result;
    });
    cache.set(key, listing);
    return listing;
  }

  return {
    async list(runtime: Runtime): Promise<ModelEntry[]> {
      const providers = [...runtime.providers.values()];
      const listings = await Promise.all(providers.map(listingOf));
      return listings.flatMap((l) => (l.ok ? l.value : []));
    },
  };
}

function fetchModels(p: Provider): Promise<Listing> {
  if (!p.authorization.ok) return Promise.resolve({ ok: false, error: `api_key refers to ${p.authorization.error}, which is not set` });
  const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
  if (p.authorization.value !== null) headers.authorization = p.authorization.value;
  const options = { ...p.target, method: 'GET', path: `${p.basePath}/models`, headers };
  const limit = Math.min(LIST_TIMEOUT_MS, p.timeoutMs);
  return new Promise((resolve) => {
    const req = p.target.protocol === 'https:' ? https.request(options) : http.request(options);
    const deadline = setTimeout(() => {
      req.destroy();
      resolve({ ok: false, error: `no answer within ${limit} ms` });
    }, limit);
    const settle = (r: Listing): void => {
      clearTimeout(deadline);
      resolve(r);
    };
    req.on('error', (e: NodeJS.ErrnoException) => settle({ ok: false, error: e.code ?? e.message }));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_LIST_BYTES) req.destroy();
        else chunks.push(c);
      });
      res.on('error', () => {});
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 400) settle({ ok: false, error: `HTTP ${res.statusCode}` });
        else settle(parseList(p.prefix, Buffer.concat(chunks).toString('utf8')));
      });
      res.on('close', () => {
        if (!res.complete) settle({ ok: false, error: 'connection closed mid-answer' });
      });
    });
    req.end();
  });
}

/** Reads an OpenAI list (`{"data": [{"id"…}]}`) and prefixes each id. */
export function parseList(prefix: string, text: string): Listing {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, error: 'the answer is not JSON' };
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { ok: false, error: 'the answer has no "data" list' };
  const out: ModelEntry[] = [];
  for (const m of data) {
    const id = (m as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') continue;
    const { created, owned_by } = m as { created?: unknown; owned_by?: unknown };
    out.push({
      id: `${prefix}:${id}`,
      object: 'model',
      created: typeof created === 'number' ? created : 0,
      owned_by: typeof owned_by === 'string' ? owned_by : prefix,
    });
  }
  return { ok: true, value: out };
}
