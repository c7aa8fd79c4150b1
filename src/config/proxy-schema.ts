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
import type { Result } from '../result.js';
import { forwardHeadersSchema } from './forward-headers.js';

/** Longest wait we accept, in seconds (one day); Node timers cap out near 24.8 days. */
export const MAX_TIMEOUT_SECONDS = 86_400;

/** A provider prefix: what comes before the first colon of `model`. */
export const PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

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

/** One upstream that speaks the OpenAI API. */
export const providerSchema = z.looseObject({
  base_url: baseUrl,
  api_key: secret.optional(),
  timeout: seconds.optional(),
});

const PREFIX_MESSAGE =
  'expected a provider prefix of letters, digits, ".", "_" or "-" (no colon), at most 64 characters, starting with a letter or digit';

const prefix = z
  .string()
  .regex(PREFIX_PATTERN, { error: PREFIX_MESSAGE });

/** The `proxy:` section. */
export const proxySchema = z.looseObject({
  default_timeout: seconds.default(600),
  api_keys: z
    .array(secret, { error: 'expected a list of keys' })
    .min(1, { error: 'expected at least one key; remove api_keys to leave the proxy open' })
    .optional(),
  providers: z
    .record(prefix, providerSchema, {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? PREFIX_MESSAGE
          : 'expected a map of providers keyed by prefix, e.g. gpu1: { base_url: http://127.0.0.1:11434/v1 }',
    })
    .default({}),
  forward_headers: forwardHeadersSchema.optional(),
});

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
