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

// How much of the body is checked at a time while looking for the first bad byte.
const PIECE_BYTES = 64 * 1024;

/**
 * The 0-based offset of the first byte that breaks UTF-8, for the message (only
 * computed on failure): where a strict streaming decoder stops. Linear in the body's
 * size, so that a large body with a bad byte at its end does not hold the event loop:
 * pieces cut between characters are checked with `isUtf8` until one fails, and only
 * that piece is bisected with the decoder.
 */
function firstBadByte(bytes: Buffer): number {
  // [0, good) is whole, valid characters: a decoder starting at `good` starts fresh.
  let good = 0;
  let end = pieceEnd(bytes, Math.min(bytes.length, PIECE_BYTES));
  while (good < bytes.length && isUtf8(bytes.subarray(good, end))) {
    good = end;
    end = pieceEnd(bytes, Math.min(bytes.length, good + PIECE_BYTES));
  }
  let lo = good;
  let hi = end;
  // The longest part of the piece the decoder takes, by bisection (a part it takes
  // has every shorter part taken too).
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(good, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

/**
 * Where to end a piece near `at`: at the first byte of the character `at` falls in (a
 * step back over continuation bytes, 0x80–0xBF, of which a character has at most 3),
 * so that a piece that checks out is whole characters; or just after `at` when even 3
 * steps land on one, since the body breaks by `at` then and the piece must hold that.
 */
function pieceEnd(bytes: Buffer, at: number): number {
  const continues = (i: number): boolean => i < bytes.length && (bytes[i]! & 0xc0) === 0x80;
  let i = at;
  while (i > at - 3 && i > 0 && continues(i)) i--;
  return continues(i) && i > 0 ? at + 1 : i;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
