import { invalidRequest, type ProxyError } from '../errors.js';
import { spliceTopLevelString, topLevelValueSpans } from './json-splice.js';

/**
 * `model` is `<prefix>:<model_name>`, split at the first colon, because model names
 * hold colons themselves (`gpu1:llama3:8b` → `gpu1`, `llama3:8b`).
 */
export function splitModel(model: string): { prefix: string; model: string } | null {
  const colon = model.indexOf(':');
  if (colon <= 0) return null;
  return { prefix: model.slice(0, colon), model: model.slice(colon + 1) };
}

/**
 * The body as the provider gets it: `bytes` with the top-level `model` replaced by
 * `model`, every other byte as the client sent it. `bytes` must have passed `readJsonBody`.
 */
export function withModel(bytes: Buffer, model: string): Buffer {
  return spliceTopLevelString(bytes, 'model', model);
}

const MODEL = Buffer.from('model');
const ESCAPE = Buffer.from('\\u');

/**
 * The 400 for a body with more than one top-level `model` (`bytes` must have passed
 * `readJsonBody`), else null. JSON.parse keeps the last of duplicate keys, some
 * providers' parsers the first, others refuse the body: the proxy would check one
 * model against the client's list while the provider serves another. The walk over
 * the body's members is skipped when no second `model` can be in it: the letters at
 * most once, and no `\u` escape that could spell them.
 */
export function duplicateModel(bytes: Buffer): ProxyError | null {
  const first = bytes.indexOf(MODEL);
  if ((first === -1 || bytes.indexOf(MODEL, first + MODEL.length) === -1) && bytes.indexOf(ESCAPE) === -1) return null;
  const members = topLevelValueSpans(bytes, 'model').length;
  return members < 2 ? null : invalidRequest(`the body has ${members} "model" members; give it once (JSON parsers differ on which of duplicate keys counts)`, 'model');
}
