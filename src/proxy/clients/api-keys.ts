import { bearerToken, digestSecret, secretMatches, type SecretDigest } from '../../edge/tokens.js';

/** A client key kept as its digest, so every comparison takes the same time whatever the lengths. */
export type KeyDigest = SecretDigest;

export const digestKey = digestSecret;

/**
 * True when `authorization` is `Bearer <k>` with `k` one of `keys`. Every key is
 * compared, match or not, so the time taken does not reveal which one matched or
 * how much of a key was right.
 */
export function bearerMatches(authorization: string | undefined, keys: readonly KeyDigest[]): boolean {
  const token = bearerToken(authorization);
  return token !== null && secretMatches(token, keys);
}

/**
 * The client's key as an Authorization value: its own, or, from Anthropic's clients,
 * which send the key as `x-api-key`, that key as a Bearer token.
 */
export function clientAuthorization(headers: { authorization?: string; 'x-api-key'?: string | string[] }): string | undefined {
  const apiKey = headers['x-api-key'];
  return headers.authorization === undefined && typeof apiKey === 'string' ? `Bearer ${apiKey}` : headers.authorization;
}
