/**
 * A Messages stream as a chat-completion stream, event by event:
 *
 *   message_start ▶ the first chunk (role, empty content)
 *   content_block_start (tool_use) ▶ a tool_calls chunk with the id, name and empty arguments
 *   text_delta / thinking_delta / input_json_delta ▶ content / reasoning_content / arguments chunks
 *   message_delta ▶ the chunk with finish_reason
 *   message_stop ▶ the usage chunk (when stream_options.include_usage), then [DONE]
 *   error ▶ `data: {"error": …}`, never followed by [DONE]
 *   the end before message_stop ▶ a cut (the relay adds the error event)
 *
 * Other events (ping, content_block_stop, signature deltas) make no chunk.
 */
import { errorJson, type ProxyError } from '../errors.js';
import { chatUsage, finishReason } from './messages-to-chat-answer.js';
import { isObject, type Json } from './shape.js';
import { dataEvent, eventObject, upstreamStreamError, type SseEvent } from './sse-events.js';
import type { StreamTranslator } from './stream.js';

export class MessagesToChatStream implements StreamTranslator {
  private id = 'chatcmpl-translated';
  private model: unknown = '';
  private readonly created = Math.floor(Date.now() / 1000);
  private done = false;
  // Block index (Messages) → tool call index (chat).
  private readonly tools = new Map<number, number>();
  private usage: Json = {};

  constructor(private readonly includeUsage: boolean) {}

  event(e: SseEvent): string {
    if (this.done) return '';
    const read = eventObject(e);
    if (!read.ok) return this.fail(read.error);
    const v = read.value;
    if (v === null) return '';
    switch (v.type ?? e.name) {
      case 'message_start': {
        const m = isObject(v.message) ? v.message : {};
        if (typeof m.id === 'string') this.id = m.id;
        this.model = m.model ?? '';
        if (isObject(m.usage)) this.usage = { ...m.usage };
        return this.chunk({ role: 'assistant', content: '' });
      }
      case 'content_block_start': {
        const b = isObject(v.content_block) ? v.content_block : {};
        if (b.type !== 'tool_use' || typeof v.index !== 'number') return '';
        const at = this.tools.size;
        this.tools.set(v.index, at);
        return this.chunk({ tool_calls: [{ index: at, id: b.id, type: 'function', function: { name: b.name, arguments: '' } }] });
      }
      case 'content_block_delta': {
        const d = isObject(v.delta) ? v.delta : {};
        if (d.type === 'text_delta') return this.chunk({ content: d.text });
        if (d.type === 'thinking_delta') return this.chunk({ reasoning_content: d.thinking });
        if (d.type === 'input_json_delta' && typeof v.index === 'number') {
          const at = this.tools.get(v.index);
          return at === undefined ? '' : this.chunk({ tool_calls: [{ index: at, function: { arguments: d.partial_json } }] });
        }
        return '';
      }
      case 'message_delta': {
        if (isObject(v.usage)) this.usage = { ...this.usage, ...v.usage };
        const d = isObject(v.delta) ? v.delta : {};
        return this.chunk({}, finishReason(d.stop_reason));
      }
      case 'message_stop': {
        this.done = true;
        const usage = this.includeUsage ? dataEvent({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: chatUsage(this.usage) }) : '';
        return `${usage}data: [DONE]\n\n`;
      }
      case 'error':
        return this.fail(upstreamStreamError(v.error));
      default:
        return '';
    }
  }

  end(): string | null {
    return this.done ? '' : null;
  }

  fail(e: ProxyError): string {
    this.done = true;
    return `data: ${errorJson(e)}\n\n`;
  }

  private chunk(delta: Json, finish: string | null = null): string {
    return dataEvent({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  }
}
