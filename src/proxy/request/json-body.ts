import { isUtf8 } from 'node:buffer';
import { err, type Result } from '../../kernel/result.js';
import { invalidRequest, type ProxyError } from '../errors.js';
import type { Endpoint } from '../routes.js';

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
  const continues = (i: number): boolean => i < bytes.length && ((bytes[i] ?? 0) & 0xc0) === 0x80;
  let i = at;
  while (i > at - 3 && i > 0 && continues(i)) i--;
  return continues(i) && i > 0 ? at + 1 : i;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A request body that passed the proxy's own checks, with `model` as the client sent it. */
export interface ModelRequest {
  /** The body as received (UTF-8 JSON of an object), for splicing the target's model into. */
  bytes: Buffer;
  model: string;
  /** The body as parsed, for the few fields the proxy reads besides `model` (`store`). */
  fields: Record<string, unknown>;
}

const bad = (message: string, param: string | null): Result<never, ProxyError> => err(invalidRequest(message, param));

/** Checks a body once: UTF-8 JSON of an object, `model`, and `messages` where the endpoint has them. */
export function parseModelRequest(endpoint: Endpoint, bytes: Buffer): Result<ModelRequest, ProxyError> {
  const json = readJsonBody(bytes);
  if (!json.ok) return json;
  const fields = json.value.fields;
  const model = fields.model;
  if (model === undefined) return bad('missing required field "model" (expected "<prefix>:<model_name>" or an alias)', 'model');
  if (typeof model !== 'string' || model === '') {
    return bad(`"model" must be a non-empty string "<prefix>:<model_name>" or an alias, found ${model === '' ? 'an empty string' : describe(model)}`, 'model');
  }
  for (const name of endpoint.lists ?? []) {
    const list = fields[name];
    if (list === undefined) return bad(`missing required field "${name}" (expected an array of message objects)`, name);
    if (!Array.isArray(list)) return bad(`"${name}" must be an array of message objects, found ${describe(list)}`, name);
    const i = list.findIndex((m: unknown) => typeof m !== 'object' || m === null || Array.isArray(m));
    if (i !== -1) return bad(`"${name}[${i}]" must be a message object, found ${describe(list[i])}`, `${name}[${i}]`);
  }
  return { ok: true, value: { bytes, model, fields } };
}
