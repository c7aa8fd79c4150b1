/**
 * `/v1/messages/count_tokens` for an OpenAI-format provider: the request as chat
 * messages, counted by the provider's `/tokenize` (vLLM's and llama.cpp's servers have
 * one, at the server's root, beside `/v1`). A provider without it is a 501 that says so.
 */
import { err, ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { messagesToChatRequest } from './messages-to-chat-request.js';
import type { Json, TranslatedRequest } from './shape.js';

/** The body for `/tokenize`: vLLM reads the chat `messages` (through the chat template), llama.cpp the plain `content`. */
export function countTokensRequest(m: Json): Result<TranslatedRequest, ProxyError> {
  // count_tokens has no max_tokens; the chat mapping does not need one.
  const chat = messagesToChatRequest(m);
  if (!chat.ok) return chat;
  const messages = chat.value.body.messages as Json[];
  const content = messages.map((x) => (typeof x.content === 'string' ? x.content : '')).join('\n');
  const body: Json = { model: m.model, messages, content, add_generation_prompt: true };
  if (chat.value.body.tools !== undefined) body.tools = chat.value.body.tools;
  return ok({ body, dropped: chat.value.dropped });
}

/** `/tokenize` lives at the server's root: the base path without its `/v1`. */
export const tokenizePath = (basePath: string): string => `${basePath.replace(/\/v1$/, '')}/tokenize`;

/** vLLM answers `{"count", "tokens"}`, llama.cpp `{"tokens"}`: Messages' `{"input_tokens"}`. */
export function countTokensAnswer(body: Json): Result<Json, ProxyError> {
  if (typeof body.count === 'number') return ok({ input_tokens: body.count });
  if (Array.isArray(body.tokens)) return ok({ input_tokens: body.tokens.length });
  return err({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: 'the provider\'s /tokenize answered without "count" or "tokens"' });
}

/** A provider that has no `/tokenize` (404, 405, 501): count_tokens cannot be answered for it. */
export function countTokensError(status: number, e: ProxyError, prefix: string): ProxyError {
  if (status !== 404 && status !== 405 && status !== 501) return e;
  return {
    status: 501,
    type: 'invalid_request_error',
    code: 'count_tokens_unavailable',
    message: `provider "${prefix}" speaks the OpenAI format and has no /tokenize endpoint (vLLM's and llama.cpp's servers have one), so /v1/messages/count_tokens cannot be answered for it`,
  };
}
