/**
 * The `proxy:` section of config.yaml (SPEC §9).
 *
 * The schema is strict about types but keeps keys it does not know: the main loader
 * warns about them, and the panel writes the file back with them intact. `${VAR}`
 * references are NOT expanded here: the parsed config stays as written (so no secret
 * ever sits in it, and the panel never writes a secret back), and the proxy expands
 * them with `expandEnv` when it uses a key. An unset variable is therefore an error
 * at use: the request that needs the key gets a clear error, and the log names the
 * variable.
 */
import { z } from 'zod';
import type { Result } from '../kernel/result.js';
import { forwardHeadersSchema } from './forward-headers.js';
import { clientsSchema } from './proxy-clients.js';

/** Longest wait we accept, in seconds (one day); Node timers cap out near 24.8 days. */
export const MAX_TIMEOUT_SECONDS = 86_400;

/** A provider prefix: what comes before the first colon of `model`. */
export const PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The longest `keep_alive`: idle connections are not worth keeping longer. */
export const MAX_KEEP_ALIVE_SECONDS = 600;

const seconds = z
  .number({ error: 'expected a number of seconds' })
  .positive({ error: 'expected a number of seconds greater than 0' })
  .max(MAX_TIMEOUT_SECONDS, { error: `expected at most ${MAX_TIMEOUT_SECONDS} seconds (one day)` });

const secret = z
  .string({ error: 'expected a string (a key, or ${VAR} to read it from the environment)' })
  .min(1, { error: 'expected a non-empty string' });

const baseUrl = z
  .string({ error: 'expected an http:// or https:// URL' })
  .refine(isHttpUrl, { error: 'expected an http:// or https:// URL without query or fragment, e.g. http://127.0.0.1:11434/v1' });

/** The request formats a provider can take: which endpoints may be routed to it. */
export const PROVIDER_FORMATS = ['openai', 'anthropic'] as const;
export type ProviderFormat = (typeof PROVIDER_FORMATS)[number];

const format = z.enum(PROVIDER_FORMATS, { error: `expected ${PROVIDER_FORMATS.join(' or ')}` });

/** A tunnel name as config.yaml spells it (the supervisor checks the tunnel exists when a request needs it). */
const tunnelName = z.string({ error: 'expected the name of a tunnel of this file' }).min(1, { error: 'expected the name of a tunnel of this file' });

const urlPath = z
  .string({ error: 'expected a URL path such as /v1' })
  .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/, { error: 'expected a URL path starting with "/" (no query or fragment), such as /v1' });

/**
 * One upstream: either at `base_url`, or at the local end of one of the daemon's
 * tunnels (`tunnel`, with `path` the API root on it), looked up by name on every
 * request so that it follows the tunnel through edits.
 */
export const providerSchema = z
  .looseObject({
    base_url: baseUrl.optional(),
    tunnel: tunnelName.optional(),
    path: urlPath.optional(),
    api_key: secret.optional(),
    timeout: seconds.optional(),
    keep_alive: z
      .number({ error: 'expected a number of seconds (0: a new connection for every request)' })
      .min(0, { error: 'expected a number of seconds, 0 or more (0: a new connection for every request)' })
      .max(MAX_KEEP_ALIVE_SECONDS, { error: `expected at most ${MAX_KEEP_ALIVE_SECONDS} seconds` })
      .optional(),
    // `chat`: the provider serves chat completions but not the Responses API (most
    // self-hosted servers); /v1/responses is translated to chat for it (SPEC §9a).
    responses: z.enum(['native', 'chat'], { error: 'expected native (the provider serves /responses) or chat (translate /v1/responses to chat completions)' }).optional(),
    format: z.union([format, z.array(format, { error: `expected ${PROVIDER_FORMATS.join(' or ')}, or a list of them` }).min(1)], {
      error: `expected ${PROVIDER_FORMATS.join(' or ')}, or a list of them`,
    }).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.base_url === undefined && p.tunnel === undefined) {
      ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'expected base_url: <http:// URL>, or tunnel: <name of a tunnel> with path: /v1' });
    } else if (p.base_url !== undefined && p.tunnel !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['tunnel'], message: 'expected either base_url or tunnel, not both' });
    } else if (p.base_url !== undefined && p.path !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'expected path only with tunnel (put the path in base_url)' });
    }
  });

const PREFIX_MESSAGE =
  'expected a provider prefix of letters, digits, ".", "_" or "-" (no colon), at most 64 characters, starting with a letter or digit';

const prefix = z
  .string()
  .regex(PREFIX_PATTERN, { error: PREFIX_MESSAGE });

const TARGET_MESSAGE = 'expected "<prefix>:<model_name>" with the prefix of a provider';
const target = z.string({ error: TARGET_MESSAGE });

/** The largest `max_body_mib`: a GiB is far beyond any prompt or upload a model server takes. */
export const MAX_BODY_MIB = 1024;

/** The `proxy:` section. */
export const proxySchema = z
  .looseObject({
    default_timeout: seconds.default(600),
    api_keys: z
      .array(secret, { error: 'expected a list of keys' })
      .min(1, { error: 'expected at least one key; remove api_keys to leave the proxy open' })
      .optional(),
    clients: clientsSchema.optional(),
    providers: z
      .record(prefix, providerSchema, {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? PREFIX_MESSAGE
            : 'expected a map of providers keyed by prefix, e.g. gpu1: { base_url: http://127.0.0.1:11434/v1 }',
      })
      .default({}),
    aliases: z
      .record(
        z.string().min(1, { error: 'expected a model name' }).max(256, { error: 'expected a model name of at most 256 characters' }),
        z.union([target, z.array(target, { error: `a list of targets, each ${TARGET_MESSAGE}` }).min(1, { error: 'expected at least one target' })], {
          error: `${TARGET_MESSAGE}, or a list of them tried in order`,
        }),
        { error: 'expected a map of model names to targets, e.g. gpt-4o-mini: gpu1:llama3:8b' },
      )
      .optional(),
    default_provider: z.string({ error: 'expected the prefix of a provider' }).optional(),
    forward_headers: forwardHeadersSchema.optional(),
    max_body_mib: z
      .number({ error: 'expected a number of MiB, e.g. 32' })
      .int({ error: 'expected a whole number of MiB, e.g. 32' })
      .min(1, { error: 'expected at least 1 MiB' })
      .max(MAX_BODY_MIB, { error: `expected at most ${MAX_BODY_MIB} MiB` })
      .optional(),
    cors_origins: z
      .array(
        z.string().regex(/^(\*|https?:\/\/[^/\s]+)$/, { error: 'expected "*" or an origin such as https://app.example.com (scheme and host, no path)' }),
        { error: 'expected a list of origins, e.g. ["https://app.example.com"]' },
      )
      .optional(),
  })
  // Run even when other fields have problems, so that one pass reports them all.
  .superRefine(checkReferences, { when: (payload) => typeof payload.value === 'object' && payload.value !== null });

/** Alias targets and `default_provider` name providers of the section. */
function checkReferences(c: { providers?: unknown; aliases?: unknown; default_provider?: unknown }, ctx: z.RefinementCtx): void {
  const known = typeof c.providers === 'object' && c.providers !== null ? Object.keys(c.providers) : [];
  const knownText = known.length === 0 ? 'no providers are configured' : `providers: ${known.join(', ')}`;
  const aliases = typeof c.aliases === 'object' && c.aliases !== null ? Object.entries(c.aliases) : [];
  for (const [name, targets] of aliases) {
    const list: unknown[] = Array.isArray(targets) ? targets : [targets];
    list.forEach((t, i) => {
      if (typeof t !== 'string') return;
      const colon = t.indexOf(':');
      if (colon > 0 && colon < t.length - 1 && known.includes(t.slice(0, colon))) return;
      ctx.addIssue({
        code: 'custom',
        path: Array.isArray(targets) ? ['aliases', name, i] : ['aliases', name],
        message: `expected "<prefix>:<model_name>" with the prefix of a provider (${knownText})`,
      });
    });
  }
  if (typeof c.default_provider === 'string' && !known.includes(c.default_provider)) {
    ctx.addIssue({ code: 'custom', path: ['default_provider'], message: `expected the prefix of a provider (${knownText})` });
  }
}

export type ProviderConfig = z.infer<typeof providerSchema>;
export type ProxyConfig = z.infer<typeof proxySchema>;

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '' && !text.includes('#');
}

/** Why `expandEnv` could not expand a value. */
export interface UnsetVariable {
  reason: 'unset_variable';
  /** The variable named in `${…}` that is unset or empty. */
  variable: string;
}

const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces every `${NAME}` in `text` with `env.NAME`. `$${NAME}` stands for a literal
 * `${NAME}`. A variable that is unset or empty is an error rather than an empty key:
 * an empty key would silently turn authentication into "no key".
 */
export function expandEnv(text: string, env: Record<string, string | undefined>): Result<string, UnsetVariable> {
  let missing: string | null = null;
  const out = text.replace(REFERENCE, (whole, escaped: string | undefined, name: string) => {
    if (escaped) return whole.slice(1);
    const value = env[name];
    if (value === undefined || value === '') {
      missing ??= name;
      return '';
    }
    return value;
  });
  return missing === null ? { ok: true, value: out } : { ok: false, error: { reason: 'unset_variable', variable: missing } };
}
