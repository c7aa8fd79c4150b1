/**
 * A chat-completion answer as a Messages answer, whole (`chatToMessagesAnswer`) and
 * the parts the stream translation shares: stop reasons and usage. Pure.
 */
import { err, ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { isObject, type Json } from './shape.js';

/** What the answer translation needs to know of the request. */
export interface MessagesContext {
  /** The request's `stop_sequences`: a chat provider says which one matched (vLLM's `stop_reason`), Messages names it. */
  stopSequences: readonly string[];
}

/** Messages' `stop_reason` and `stop_sequence` for a choice's `finish_reason` (and vLLM's matched `stop_reason`). */
export function stopReason(finish: unknown, matched: unknown, ctx: MessagesContext): { stop_reason: string; stop_sequence: string | null } {
  switch (finish) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      // 'stop' (or a server's own word): the end of a turn, or one of the stop sequences when the provider names it.
      if (typeof matched === 'string' && ctx.stopSequences.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
      return { stop_reason: 'end_turn', stop_sequence: null };
  }
}

/** Messages' usage from a chat usage object (cached prompt tokens included). */
export function messagesUsage(u: unknown): Json {
  if (!isObject(u)) return { input_tokens: 0, output_tokens: 0 };
  const out: Json = { input_tokens: num(u.prompt_tokens), output_tokens: num(u.completion_tokens) };
  const cached = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details.cached_tokens : undefined;
  if (typeof cached === 'number') {
    // Messages counts cache reads apart from the other input tokens; chat includes them.
    out.cache_read_input_tokens = cached;
    out.input_tokens = Math.max(0, (out.input_tokens as number) - cached);
  }
  return out;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** A tool call's `arguments` (a JSON text) as a tool_use block's `input` object. */
export function toolInput(name: unknown, args: unknown): Result<Json, ProxyError> {
  if (args === undefined || args === null || args === '') return ok({});
  try {
    const v: unknown = typeof args === 'string' ? JSON.parse(args) : args;
    if (isObject(v)) return ok(v);
  } catch {
    // Said below.
  }
  return err({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_bad_tool_call',
    message: `the provider's call of tool ${JSON.stringify(name)} has arguments that are not a JSON object: ${String(typeof args === 'string' ? args : JSON.stringify(args)).slice(0, 200)}`,
  });
}

export function chatToMessagesAnswer(chat: Json, ctx: MessagesContext): Result<Json, ProxyError> {
  const choice: unknown = Array.isArray(chat.choices) ? chat.choices[0] : undefined;
  if (!isObject(choice) || !isObject(choice.message)) {
    return err({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: 'the provider answered a chat completion without choices[0].message' });
  }
  const msg = choice.message;
  const content: Json[] = [];
  // vLLM's and SGLang's reasoning parsers put the model's thinking here.
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (typeof msg.content === 'string' && msg.content !== '') content.push({ type: 'text', text: msg.content });
  if (Array.isArray(msg.tool_calls)) {
    for (const call of msg.tool_calls as unknown[]) {
      if (!isObject(call) || !isObject(call.function)) continue;
      const input = toolInput(call.function.name, call.function.arguments);
      if (!input.ok) return input;
      content.push({ type: 'tool_use', id: typeof call.id === 'string' ? call.id : `toolu_${content.length}`, name: call.function.name, input: input.value });
    }
  }
  return ok({
    id: typeof chat.id === 'string' ? chat.id : 'msg_translated',
    type: 'message',
    role: 'assistant',
    model: chat.model ?? '',
    content,
    ...stopReason(choice.finish_reason, choice.stop_reason, ctx),
    usage: messagesUsage(chat.usage),
  });
}
