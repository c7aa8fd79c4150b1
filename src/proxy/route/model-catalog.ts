import type { Result } from '../../kernel/result.js';
import { createBodyDecoder, type DecodedSink } from '../relay/body-decoder.js';
import { bodyEncoding } from '../request/body-encoding.js';
import type { TunnelLookup } from '../deps.js';
import { describeKeyProblem, type Runtime } from './providers.js';
import type { Provider } from '../relay/provider.js';
import { relayHeaders } from '../relay/client-headers.js';
import { locate } from './targets.js';
import type { UpstreamPool } from '../relay/upstream.js';

/**
 * One entry of `GET /v1/models`, in OpenAI's shape, with every other field the
 * provider gave (vLLM's `max_model_len`, `root`, `parent`, `permission`; llama.cpp's
 * `meta`): clients read them to size prompts.
 */
export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Aliases only: what the name stands for, in the order tried. */
  targets?: string[];
  readonly [field: string]: unknown;
}

// Anthropic's API wants its version named on every call; this one is the stable one its SDKs send.
const ANTHROPIC_VERSION = '2023-06-01';

// Listing is a convenience call: a provider that hangs must not hold the list for
// its full chat timeout (the provider's timeout applies when shorter), and the answers are reused for a few seconds.
const LIST_TIMEOUT_MS = 5_000;
const FRESH_MS = 10_000;
const FAILED_FRESH_MS = 2_000;
const MAX_LIST_BYTES = 8 * 1024 * 1024;

type Listing = Result<ModelEntry[], string>;

/** The providers' models and the aliases, as `GET /v1/models` lists them. */
export interface ModelCatalog {
  list(runtime: Runtime, tunnel: TunnelLookup | undefined): Promise<ModelEntry[]>;
}

/** Fetches, caches and merges the providers' model lists; a provider that fails is left out, not fatal. */
export function createModelCatalog(pool: UpstreamPool, log?: (entry: Record<string, unknown>) => void): ModelCatalog {
  const cache = new Map<string, Promise<Listing>>();

  function listingOf(p: Provider): Promise<Listing> {
    const key = `${p.prefix}\n${p.origin.url}${p.basePath}\n${p.credential?.value ?? ''}`;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const listing = fetchModels(pool, p).then((result) => {
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
    /** Every reachable provider's models, then the aliases (listed whether or not their targets answer). */
    async list(runtime: Runtime, tunnel: TunnelLookup | undefined): Promise<ModelEntry[]> {
      const providers: Provider[] = [];
      for (const entry of runtime.providers.values()) {
        // Asked in the provider's own format, so that an Anthropic one gets its x-api-key.
        const located = locate(entry, entry.formats[0] ?? 'openai', tunnel);
        if (located.ok) providers.push(located.value);
        else log?.({ event: 'proxy_models_failed', provider: entry.prefix, error: located.error.message });
      }
      const listings = await Promise.all(providers.map(listingOf));
      const aliases = [...runtime.aliases].map(([id, targets]): ModelEntry => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'alias',
        targets: targets.map((t) => `${t.prefix}:${t.model}`),
      }));
      return [...listings.flatMap((l) => (l.ok ? l.value : [])), ...aliases];
    },
  };
}

/**
 * Asks one provider for its list. The answer is decoded when the provider compresses
 * it although asked for identity (gzip, deflate, br); the size cap holds for the
 * decoded bytes, so a small bomb cannot make the proxy hold more.
 */
function fetchModels(pool: UpstreamPool, p: Provider): Promise<Listing> {
  if (!p.key.ok) return Promise.resolve({ ok: false, error: describeKeyProblem(p.prefix, p.key.error) });
  const limit = Math.min(LIST_TIMEOUT_MS, p.timeoutMs);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    // The provider's bytes go through `input`: a decoder, or straight to `decoded`.
    let input: { write(c: Buffer): void; end(): void; destroy(): void } | null = null;
    const deadline = setTimeout(() => {
      exchange.abort();
      settle({ ok: false, error: `no answer within ${limit} ms` });
    }, limit);
    function settle(r: Listing): void {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      input?.destroy();
      resolve(r);
    }
    const decoded: DecodedSink = {
      data: (c) => {
        if (settled) return;
        size += c.length;
        if (size <= MAX_LIST_BYTES) chunks.push(c);
        else {
          exchange.abort();
          settle({ ok: false, error: `the answer is larger than ${MAX_LIST_BYTES} bytes` });
        }
      },
      end: () => settle(parseList(p.prefix, Buffer.concat(chunks).toString('utf8'))),
      error: (message) => settle({ ok: false, error: message }),
    };
    const exchange = pool.request(
      p.origin,
      // Anthropic's list comes in pages of 20 unless asked for more.
      { method: 'GET', path: `${p.basePath}/models${p.credential?.name === 'x-api-key' || onlyAnthropic(p) ? '?limit=1000' : ''}`, headers: listHeaders(p), body: null, keepAliveMs: p.keepAliveMs },
      {
        head: (s, rawHeaders) => {
          // An error is its status, whatever its body holds or how it is encoded.
          if (s >= 400) {
            exchange.abort();
            settle({ ok: false, error: `HTTP ${s}` });
            return;
          }
          const encoding = bodyEncoding(relayHeaders(rawHeaders).contentEncoding);
          if (encoding.kind === 'decodable') input = createBodyDecoder(encoding.name, decoded);
          else if (encoding.kind === 'identity') input = { write: decoded.data, end: decoded.end, destroy: () => {} };
          else {
            exchange.abort();
            settle({ ok: false, error: `the answer's content-encoding ${JSON.stringify(encoding.name.slice(0, 100))} is none the proxy reads (gzip, deflate, br)` });
          }
        },
        data: (c) => input?.write(c),
        end: () => input?.end(),
        fail: (f) => settle({ ok: false, error: f.code }),
      },
    );
  });
}

/**
 * Reads an OpenAI list (`{"data": [{"id"…}]}`) and prefixes each id. Every other field
 * of an entry is kept as the provider wrote it (a `parent` or `root` included: they name
 * the provider's own models and weights); `object`, `created` and `owned_by` are filled
 * in where the provider left them out or gave another type, as OpenAI's clients expect
 * (`created` from Anthropic's `created_at`).
 */
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
    const fields = m as Record<string, unknown>;
    const { created, owned_by } = fields;
    out.push({
      ...fields,
      id: `${prefix}:${id}`,
      object: 'model',
      created: typeof created === 'number' ? created : secondsOf(fields.created_at),
      owned_by: typeof owned_by === 'string' ? owned_by : prefix,
    });
  }
  return { ok: true, value: out };
}

/** Anthropic's `created_at` (an RFC 3339 date) as OpenAI's `created` (Unix seconds); 0 when there is none. */
function secondsOf(date: unknown): number {
  const ms = typeof date === 'string' ? Date.parse(date) : NaN;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

function listHeaders(p: Provider): string[] {
  const headers = ['accept', 'application/json'];
  if (p.credential !== null) headers.push(p.credential.name, p.credential.value);
  if (p.credential?.name === 'x-api-key' || onlyAnthropic(p)) headers.push('anthropic-version', ANTHROPIC_VERSION);
  return headers;
}

const onlyAnthropic = (p: Provider): boolean => p.formats.length === 1 && p.formats[0] === 'anthropic';
