/**
 * Whole server-sent events (as relay/sse-frames.ts cuts them) read into their name and data,
 * for the stream translations, which work on events rather than bytes. Comments and
 * fields other than `event` and `data` are left out (`id`, `retry`: the proxy's
 * streams are not resumed).
 */
import { err, ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { isObject, type Json } from './shape.js';

export interface SseEvent {
  /** The `event:` field, or null (OpenAI's streams name none). */
  name: string | null;
  /** The `data:` lines joined by line feeds. */
  data: string;
}

export function readEvents(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  let name: string | null = null;
  let data: string[] | null = null;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data !== null) out.push({ name, data: data.join('\n') });
      name = null;
      data = null;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') (data ??= []).push(value);
    else if (field === 'event') name = value;
  }
  if (data !== null) out.push({ name, data: data.join('\n') });
  return out;
}

/** An event as Anthropic's API writes them: named, its `type` repeated in the data. */
export const namedEvent = (type: string, value: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

/** An event as OpenAI's API writes them: data only. */
export const dataEvent = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

/**
 * An event's data as the object every provider's stream event is: the object, null
 * for JSON that is not an object (skipped), or the error for data that is not JSON.
 */
export function eventObject(e: SseEvent): Result<Json | null, ProxyError> {
  let v: unknown;
  try {
    v = JSON.parse(e.data);
  } catch {
    return err({ status: 502, type: 'upstream_error', code: 'upstream_bad_event', message: 'the provider sent a stream event that is not JSON' });
  }
  return ok(isObject(v) ? v : null);
}

/** A provider's error chunk (`data: {"error": {...}}`) as the proxy's error. */
export function upstreamStreamError(error: unknown): ProxyError {
  const message = isObject(error) && typeof error.message === 'string' ? error.message : typeof error === 'string' ? error : JSON.stringify(error);
  return { status: 502, type: 'upstream_error', code: 'upstream_stream_error', message: `the provider's stream ended with an error: ${message}` };
}

/** What one delta of a chat-completion stream carries; empty strings and lists when it has none of a kind. */
export interface ChatDelta {
  /** `reasoning_content` (vLLM, DeepSeek) or `reasoning` (Ollama, LM Studio). */
  reasoning: string;
  content: string;
  toolCalls: Json[];
  /** The choice's finish_reason once it is given, and the stop sequence some servers name beside it. */
  finishReason: unknown;
  stopReason: unknown;
}

/**
 * One event of a chat-completion stream, read once for every translator of such
 * streams: the end (`[DONE]`), a failure (data that is not JSON, or the provider's error
 * chunk), nothing (data that is not an object), or a chunk with its usage and its first
 * choice's delta (null when it has no choice).
 */
export type ChatStreamEvent =
  | { kind: 'done' }
  | { kind: 'failed'; error: ProxyError }
  | { kind: 'nothing' }
  | { kind: 'chunk'; chunk: Json; usage: Json | null; delta: ChatDelta | null };

export function chatStreamEvent(e: SseEvent): ChatStreamEvent {
  if (e.data === '[DONE]') return { kind: 'done' };
  const read = eventObject(e);
  if (!read.ok) return { kind: 'failed', error: read.error };
  const chunk = read.value;
  if (chunk === null) return { kind: 'nothing' };
  if (chunk.error !== undefined) return { kind: 'failed', error: upstreamStreamError(chunk.error) };
  const usage = isObject(chunk.usage) ? chunk.usage : null;
  const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  if (!isObject(choice)) return { kind: 'chunk', chunk, usage, delta: null };
  const d = isObject(choice.delta) ? choice.delta : {};
  const reasoning = d.reasoning_content ?? d.reasoning;
  return {
    kind: 'chunk',
    chunk,
    usage,
    delta: {
      reasoning: typeof reasoning === 'string' ? reasoning : '',
      content: typeof d.content === 'string' ? d.content : '',
      toolCalls: Array.isArray(d.tool_calls) ? (d.tool_calls as unknown[]).filter(isObject) : [],
      finishReason: choice.finish_reason ?? null,
      stopReason: choice.stop_reason,
    },
  };
}
