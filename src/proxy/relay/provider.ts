import type { ProviderFormat } from '../../config/proxy-schema.js';
import type { Result } from '../../kernel/result.js';
import type { Origin } from './upstream.js';
import type { Credential } from './upstream-headers.js';

/** Why a provider's `api_key` cannot be sent. */
export type KeyProblem =
  | { reason: 'unset_variable'; variable: string }
  /** The expanded key holds a line break or another character an HTTP header cannot carry. */
  | { reason: 'not_header_safe' }
  /** The expanded key is blank (white space only). */
  | { reason: 'blank' };

/** One provider, ready to send requests to. */
export interface Provider {
  prefix: string;
  /** The request formats it takes (`openai` unless the config says otherwise). */
  formats: readonly ProviderFormat[];
  /** For messages and the tunnel lookup: the host and port the base URL names. */
  hostname: string;
  port: number;
  origin: Origin;
  /** The base URL's path without a trailing slash, e.g. `/v1`. */
  basePath: string;
  /** The upstream key (null: none), or why it cannot be used. */
  key: Result<string | null, KeyProblem>;
  /** `authorization: Bearer <key>` (OpenAI's way; Anthropic's is `x-api-key`, see `withCredentialFor`), or null without a key. */
  credential: Credential | null;
  timeoutMs: number;
  timeoutSeconds: number;
  /** How long an idle connection to it is kept for the next request (`keep_alive`); 0: one connection per request. */
  keepAliveMs: number;
}

/** The provider's key as it is sent (never blank: compile refuses that), or null when it has none or none that can be used. */
export function keyOf(p: Pick<Provider, 'key'>): string | null {
  return p.key.ok ? p.key.value : null;
}
