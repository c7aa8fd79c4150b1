/**
 * A chat-completion answer as a Responses API `response` object, whole, and the
 * pieces the stream translation builds its events from. Pure.
 */
import { err, ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { isObject, type Json } from './shape.js';

/** What the answer repeats of the request (the Responses API echoes its parameters). */
export interface ResponsesContext {
  request: Json;
}

export function responsesUsage(u: unknown): Json | null {
  if (!isObject(u)) return null;
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const cached = isObject(u.prompt_tokens_details) ? n(u.prompt_tokens_details.cached_tokens) : 0;
  const reasoning = isObject(u.completion_tokens_details) ? n(u.completion_tokens_details.reasoning_tokens) : 0;
  const input = n(u.prompt_tokens);
  const output = n(u.completion_tokens);
  return { input_tokens: input, input_tokens_details: { cached_tokens: cached }, output_tokens: output, output_tokens_details: { reasoning_tokens: reasoning }, total_tokens: input + output };
}

export const messageItem = (id: string, text: string, status: 'in_progress' | 'completed'): Json => ({
  type: 'message',
  id,
  status,
  role: 'assistant',
  content: status === 'in_progress' && text === '' ? [] : [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

/** The model's reasoning (vLLM's `reasoning_content`) as the API's reasoning item, as open models' reasoning is written there. */
export const reasoningItem = (id: string, text: string, status: 'in_progress' | 'completed'): Json => ({
  type: 'reasoning',
  id,
  summary: [],
  content: status === 'in_progress' && text === '' ? [] : [{ type: 'reasoning_text', text }],
});

export const callItem = (id: string, callId: string, name: string, args: string, status: 'in_progress' | 'completed'): Json => ({ type: 'function_call', id, call_id: callId, name, arguments: args, status });

/** The response object around `output`, with the request's parameters echoed as the API does. */
export function responseObject(id: string, model: unknown, created: number, ctx: ResponsesContext, status: 'in_progress' | 'completed' | 'incomplete', output: Json[], usage: Json | null): Json {
  const r = ctx.request;
  return {
    id,
    object: 'response',
    created_at: created,
    status,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: r.temperature ?? 1,
    text: r.text ?? { format: { type: 'text' } },
    tool_choice: r.tool_choice ?? 'auto',
    tools: r.tools ?? [],
    top_p: r.top_p ?? 1,
    truncation: 'disabled',
    usage,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

export function chatToResponsesAnswer(chat: Json, ctx: ResponsesContext): Result<Json, ProxyError> {
  const choice: unknown = Array.isArray(chat.choices) ? chat.choices[0] : undefined;
  if (!isObject(choice) || !isObject(choice.message)) {
    return err({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: 'the provider answered a chat completion without choices[0].message' });
  }
  const id = typeof chat.id === 'string' ? chat.id : 'translated';
  const msg = choice.message;
  const output: Json[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') output.push(reasoningItem(`rs_${id}`, reasoning, 'completed'));
  if (typeof msg.content === 'string' && msg.content !== '') output.push(messageItem(`msg_${id}`, msg.content, 'completed'));
  if (Array.isArray(msg.tool_calls)) {
    (msg.tool_calls as unknown[]).forEach((call, i) => {
      if (!isObject(call) || !isObject(call.function)) return;
      const callId = typeof call.id === 'string' ? call.id : `call_${i}`;
      output.push(callItem(`fc_${callId}`, callId, String(call.function.name), typeof call.function.arguments === 'string' ? call.function.arguments : '{}', 'completed'));
    });
  }
  const created = typeof chat.created === 'number' ? chat.created : Math.floor(Date.now() / 1000);
  return ok(responseObject(`resp_${id}`, chat.model ?? '', created, ctx, choice.finish_reason === 'length' ? 'incomplete' : 'completed', output, responsesUsage(chat.usage)));
}
