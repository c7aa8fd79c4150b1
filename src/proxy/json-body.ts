import { isUtf8 } from 'node:buffer';
import type { Result } from '../result.js';
import type { ProxyError } from './errors.js';

/** A request body that is UTF-8 text of a JSON object: the bytes as received, and the object parsed from them. */
export interface JsonBody {
  bytes: Buffer;
  fields: Record<string, unknown>;
}

const invalidJson = (message: string): Result<never, ProxyError> => ({
  ok: false,
  error: { status: 400, type: 'invalid_request_error', code: 'invalid_json', message, param: null },
});

/** Checks that `bytes` are UTF-8 JSON holding an object; every endpoint's body goes through here once. */
export function readJsonBody(bytes: Buffer): Result<JsonBody, ProxyError> {
  // Checked first: decoding would put U+FFFD in place of bad bytes, and the provider
  // would get something the client never sent.
  if (!isUtf8(bytes)) return invalidJson(`the request body is not valid UTF-8 (byte ${firstBadByte(bytes)} of ${bytes.length})`);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    return invalidJson(`the request body is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalidJson(`the request body must be a JSON object, found ${describe(value)}`);
  }
  return { ok: true, value: { bytes, fields: value as Record<string, unknown> } };
}

/** The 0-based offset of the first byte that breaks UTF-8, for the message (only computed on failure). */
function firstBadByte(bytes: Buffer): number {
  let lo = 0;
  let hi = bytes.length;
  // The longest valid prefix, by bisection over the same strict decoder.
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
