import type { Result } from '../result.js';
import type { ProxyError } from './errors.js';
import { describe, readJsonBody } from './json-body.js';
import { spliceTopLevelString } from './json-splice.js';

/** A chat request that passed the checks the proxy itself needs; everything else is the upstream's business. */
export interface ChatRequest {
  /** The body as the provider gets it: the client's bytes with the bare model name spliced in. */
  payload: Buffer;
  /** The body as parsed (with the client's `model`), for reading fields such as `stream`. */
  fields: Record<string, unknown>;
  prefix: string;
  model: string;
}

const bad = (message: string, param: string | null, code = 'invalid_request'): Result<never, ProxyError> => ({
  ok: false,
  error: { status: 400, type: 'invalid_request_error', code, message, param },
});

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

/** Checks the body once (UTF-8, JSON object, `model`, `messages`); the caller checks the prefix against its providers. */
export function parseChatRequest(bytes: Buffer): Result<ChatRequest, ProxyError> {
  const json = readJsonBody(bytes);
  if (!json.ok) return json;
  const fields = json.value.fields;
  const model = fields.model;
  if (model === undefined) return bad('missing required field "model" (expected "<prefix>:<model_name>")', 'model');
  if (typeof model !== 'string') return bad(`"model" must be a string "<prefix>:<model_name>", found ${describe(model)}`, 'model');
  const messages = fields.messages;
  if (messages === undefined) return bad('missing required field "messages" (expected an array of message objects)', 'messages');
  if (!Array.isArray(messages)) return bad(`"messages" must be an array of message objects, found ${describe(messages)}`, 'messages');
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (typeof m !== 'object' || m === null || Array.isArray(m)) {
      return bad(`"messages[${i}]" must be a message object, found ${describe(m)}`, `messages[${i}]`);
    }
  }
  const split = splitModel(model);
  if (split === null) {
    return {
      ok: false,
      error: {
        status: 404,
        type: 'invalid_request_error',
        code: 'model_not_found',
        message: `model "${model}" has no provider prefix; expected "<prefix>:<model_name>"`,
        param: 'model',
      },
    };
  }
  if (split.model === '') return bad(`model "${model}" names no model after the prefix`, 'model');
  return { ok: true, value: { payload: withModel(bytes, split.model), fields, prefix: split.prefix, model: split.model } };
}
