/**
 * Who is calling, and whether they may (SPEC §9b). Two kinds of key open `/v1`:
 * `proxy.api_keys` (shared keys, no limits: as before) and `proxy.clients` (a key per
 * client, with its models and limits). With neither, the group is open. A key of both
 * lists is the client's. The key is checked before the body is read (401); the model
 * and the limits once the model is known (403, 429); endpoints/admission.ts puts the
 * three together for every route.
 */
import type { ServerResponse } from 'node:http';
import { bearerToken, secretMatches, type SecretDigest } from '../../edge/tokens.js';
import type { ErrorFamily, ProxyError } from '../errors.js';
import { errorFamilyOf } from '../routes.js';
import type { Observation } from '../observe/request-record.js';
import type { ClientLimiter } from './limiter.js';
import { allows, identify, type ClientRule, type ClientRules } from './rules.js';

export type Caller = { ok: true; client: ClientRule | null } | { ok: false; error: ProxyError };

const OPEN: Caller = { ok: true, client: null };

/** The caller of a request with `authorization` (a Bearer value: clientAuthorization turns `x-api-key` into one). */
export function callerOf(authorization: string | undefined, apiKeys: readonly SecretDigest[] | null, clients: ClientRules | null): Caller {
  if (apiKeys === null && clients === null) return OPEN;
  const usable = (apiKeys?.length ?? 0) + (clients?.list.filter((c) => c.digest !== null).length ?? 0);
  if (usable === 0) {
    // Fail closed, and say it is the server's setup, not the caller's key.
    const where = clients === null ? 'proxy.api_keys refers' : apiKeys === null ? 'proxy.clients refer' : 'proxy.api_keys and proxy.clients refer';
    return { ok: false, error: { status: 503, type: 'server_error', code: 'proxy_keys_unset', message: `${where} only to environment variables that are not set or empty (the server log names them: proxy_unset_variable; tunnel-manager check lists them); set them and restart the daemon: it reads its environment only when it starts` } };
  }
  const token = bearerToken(authorization);
  if (token !== null) {
    // Both lists are always searched, so the time taken does not tell which kind of key was sent.
    const client = clients === null ? null : identify(token, clients);
    const shared = apiKeys !== null && secretMatches(token, apiKeys);
    if (client !== null) return { ok: true, client };
    if (shared) return OPEN;
  }
  const message = authorization === undefined ? 'missing API key: send "Authorization: Bearer <key>" (or "x-api-key: <key>")' : 'incorrect API key';
  return { ok: false, error: { status: 401, type: 'authentication_error', code: 'invalid_api_key', message } };
}

/**
 * The provider's answer headers for a client with limits: its `x-ratelimit-*` and
 * `anthropic-ratelimit-*` leave the client's own (set by `enter`) in place, since the
 * provider's describe a key that every client shares. Other answers are returned as
 * they are.
 */
export function ownRateHeadersKept(res: ServerResponse, headers: string[]): string[] {
  if (!res.hasHeader('x-ratelimit-limit-requests') && !res.hasHeader('x-ratelimit-limit-tokens')) return headers;
  const out: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i] ?? '';
    if (!name.startsWith('x-ratelimit-') && !name.startsWith('anthropic-ratelimit-')) out.push(name, headers[i + 1] ?? '');
  }
  return out;
}

/** Whose rate headers a request's client reads besides OpenAI's: Anthropic's at its endpoints (as for its errors). */
function familyOf(res: ServerResponse): ErrorFamily {
  const url = res.req.url ?? '';
  const q = url.indexOf('?');
  return errorFamilyOf(q === -1 ? url : url.slice(0, q), res.req.headers['anthropic-version']);
}

/** The 403 for a model outside the client's patterns, naming them; null when the client may use it. */
export function modelRefusal(client: ClientRule, model: string, targets: readonly { prefix: string; model: string }[]): ProxyError | null {
  if (allows(client, model, targets)) return null;
  const shown = model.length > 64 ? `${model.slice(0, 64)}…` : model;
  return {
    status: 403,
    type: 'permission_error',
    code: 'model_not_allowed',
    param: 'model',
    message: `client "${client.name}" may not use model ${JSON.stringify(shown)}; its models: ${(client.models ?? []).join(', ')}`,
  };
}

/**
 * Lets a client's request in if its limits have room. On success the request holds a
 * place until it ends (its record's end gives it back, with the tokens its answer
 * used). The `x-ratelimit-*` headers go on the answer either way.
 */
export function takePlace(limiter: ClientLimiter, client: ClientRule, res: ServerResponse, obs: Observation): ProxyError | null {
  const refusal = limiter.take(client);
  if (client.rpm !== null || client.tpm !== null) for (const [name, value] of limiter.headers(client, familyOf(res))) res.setHeader(name, value);
  if (refusal !== null) return { status: 429, type: 'rate_limit_error', code: `rate_limit_${refusal.limit}`, message: refusal.message, retryAfterSeconds: refusal.retryAfterSeconds };
  obs.metered = client.tpm !== null;
  obs.onEnd = (usage) => limiter.release(client, (usage?.input ?? 0) + (usage?.output ?? 0));
  return null;
}
