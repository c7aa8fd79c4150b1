/**
 * A Messages answer as a chat completion, whole (`messagesToChatAnswer`) and the parts
 * the stream translation shares: finish reasons and usage. Pure.
 */
import { err, ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { isObject, type Json } from './shape.js';

/** Chat's `finish_reason` for Messages' `stop_reason`. */
export function finishReason(stop: unknown): string {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn: the answer ended.
      return 'stop';
  }
}

/** Chat's usage from Messages' (whose input count leaves out cache reads and writes; chat's includes them). */
export function chatUsage(u: unknown): Json {
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  if (!isObject(u)) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const cached = n(u.cache_read_input_tokens);
  const prompt = n(u.input_tokens) + cached + n(u.cache_creation_input_tokens);
  const completion = n(u.output_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
}

export function messagesToChatAnswer(m: Json): Result<Json, ProxyError> {
  if (!Array.isArray(m.content)) return err({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: 'the provider answered a message without a content list' });
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: Json[] = [];
  for (const b of m.content as unknown[]) {
    if (!isObject(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
    else if (b.type === 'thinking' && typeof b.thinking === 'string') thinking.push(b.thinking);
    else if (b.type === 'tool_use') calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
  }
  const message: Json = { role: 'assistant', content: texts.length === 0 && calls.length > 0 ? null : texts.join(''), refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  if (thinking.length > 0) message.reasoning_content = thinking.join('');
  return ok({
    id: typeof m.id === 'string' ? m.id : 'chatcmpl-translated',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: m.model ?? '',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(m.stop_reason) }],
    usage: chatUsage(m.usage),
  });
}
