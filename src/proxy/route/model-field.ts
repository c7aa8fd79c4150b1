import { spliceTopLevelString } from './json-splice.js';

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
