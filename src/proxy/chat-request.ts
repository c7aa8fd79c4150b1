import type { Result } from '../result.js';
import type { ProxyError } from './errors.js';

/** A chat request that passed the checks the proxy itself needs; everything else is the upstream's business. */
export interface ChatRequest {
  /** The whole body as parsed, with `model` already replaced by the bare model name. */
  body: Record<string, unknown>;
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

/** Parses the body once and checks `model` and `messages`; the caller checks the prefix against its providers. */
export function parseChatRequest(text: string): Result<ChatRequest, ProxyError> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return bad(`the request body is not valid JSON: ${(e as Error).message}`, null, 'invalid_json');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return bad('the request body must be a JSON object', null, 'invalid_json');
  }
  const fields = body as Record<string, unknown>;
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
  fields.model = split.model;
  return { ok: true, value: { body: fields, prefix: split.prefix, model: split.model } };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
