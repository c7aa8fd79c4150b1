import type { ProviderFormat } from '../config/proxy-schema.js';
import { err, type Result } from '../result.js';
import { invalidRequest, type ErrorFamily, type ProxyError } from './errors.js';
import { describe, readJsonBody } from './json-body.js';

/** One POST endpoint routed by its body's `model`; the table below is the whole list. */
export interface Endpoint {
  /** The path under `/v1`, the same on the provider (under its base path); also the `endpoint` of log lines and metrics. */
  path: string;
  /** The request format: only providers that take it get the request. */
  format: ProviderFormat;
  /** Whose error shape the endpoint's clients read. */
  family: ErrorFamily;
  /** Fields besides `model` the proxy itself relies on (everything else is the provider's to judge). */
  lists?: readonly string[];
  /** The body: JSON (the default), or a multipart/form-data upload whose `model` is a form field (multipart.ts). */
  body?: 'json' | 'multipart';
  /** The largest body taken, when not the proxy's default (16 MiB). */
  maxBytes?: number;
}

// OpenAI's own limit for an audio upload; vLLM's default is the same.
const AUDIO_UPLOAD_BYTES = 25 * 1024 * 1024;

export const ENDPOINTS: readonly Endpoint[] = [
  { path: '/chat/completions', format: 'openai', family: 'openai', lists: ['messages'] },
  { path: '/responses', format: 'openai', family: 'openai' },
  // The Responses API's token count and compaction (`responses.inputTokens.count`, `responses.compact`).
  { path: '/responses/input_tokens', format: 'openai', family: 'openai' },
  { path: '/responses/compact', format: 'openai', family: 'openai' },
  { path: '/embeddings', format: 'openai', family: 'openai' },
  { path: '/completions', format: 'openai', family: 'openai' },
  // The other JSON endpoints of OpenAI's API that model servers serve (vLLM, LocalAI,
  // llama.cpp, text-embeddings-inference), and vLLM's and Jina's rerank and score.
  { path: '/moderations', format: 'openai', family: 'openai' },
  { path: '/images/generations', format: 'openai', family: 'openai' },
  { path: '/audio/speech', format: 'openai', family: 'openai' },
  { path: '/rerank', format: 'openai', family: 'openai' },
  { path: '/score', format: 'openai', family: 'openai' },
  // Uploads: the audio file and `model` are form fields (Whisper on vLLM, LocalAI, faster-whisper servers).
  { path: '/audio/transcriptions', format: 'openai', family: 'openai', body: 'multipart', maxBytes: AUDIO_UPLOAD_BYTES },
  { path: '/audio/translations', format: 'openai', family: 'openai', body: 'multipart', maxBytes: AUDIO_UPLOAD_BYTES },
  { path: '/messages', format: 'anthropic', family: 'anthropic', lists: ['messages'] },
  // What Anthropic's SDK (messages.countTokens) and Claude Code call before a long prompt.
  { path: '/messages/count_tokens', format: 'anthropic', family: 'anthropic', lists: ['messages'] },
];

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
