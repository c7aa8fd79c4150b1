/**
 * A chat-completion stream as a Messages stream, event by event as chunks arrive:
 *
 *   first chunk ▶ message_start
 *   reasoning / text deltas ▶ content_block_start (thinking | text), then its deltas
 *   tool_calls[i] first seen ▶ the open block stops, content_block_start (tool_use, id, name)
 *   tool_calls[i].function.arguments ▶ input_json_delta of that block
 *   finish_reason ▶ noted; usage (the include_usage chunk after it) ▶ noted
 *   [DONE], or the end after a finish_reason ▶ content_block_stop for what is open,
 *     message_delta (stop reason, usage), message_stop
 *   the end without a finish_reason (a cut stream), or an error chunk ▶ an `error` event
 *
 * No state is kept beyond the open blocks and the numbers for message_delta: nothing
 * of the answer is held back.
 */
import { errorJson, type ProxyError } from '../errors.js';
import { messagesUsage, stopReason, type MessagesContext } from './chat-to-messages-answer.js';
import { isObject, type Json } from './shape.js';
import { FromChatStream, type ChatChunk } from './from-chat-stream.js';
import { namedEvent } from './sse-events.js';

type Open = { kind: 'text' | 'thinking'; index: number } | null;

export class ChatToMessagesStream extends FromChatStream {
  private started = false;
  private nextIndex = 0;
  private open: Open = null;
  // Tool call index (chat) → block index (Messages), and the tool blocks not yet stopped.
  private readonly tools = new Map<number, number>();
  private readonly openTools: number[] = [];
  private finish: { stop_reason: string; stop_sequence: string | null } | null = null;
  private usage: Json = { output_tokens: 0 };

  constructor(private readonly ctx: MessagesContext) {
    super();
  }

  protected chunk(read: ChatChunk): string {
    const { chunk, delta } = read;
    let out = '';
    if (!this.started) {
      this.started = true;
      const message = { id: typeof chunk.id === 'string' ? chunk.id : 'msg_translated', type: 'message', role: 'assistant', model: chunk.model ?? '', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
      out += namedEvent('message_start', { message });
    }
    if (read.usage !== null) this.usage = messagesUsage(read.usage);
    if (delta === null) return out;
    if (delta.reasoning !== '') out += this.inBlock('thinking', { type: 'thinking_delta', thinking: delta.reasoning });
    if (delta.content !== '') out += this.inBlock('text', { type: 'text_delta', text: delta.content });
    for (const call of delta.toolCalls) out += this.toolDelta(call);
    if (delta.finishReason !== null) this.finish = stopReason(delta.finishReason, delta.stopReason, this.ctx);
    return out;
  }

  protected finished(): boolean {
    return this.finish !== null;
  }

  protected errorEvent(e: ProxyError): string {
    return `event: error\ndata: ${errorJson(e, 'anthropic')}\n\n`;
  }

  /** A delta for the open text or thinking block, starting it (and stopping another) when needed. */
  private inBlock(kind: 'text' | 'thinking', delta: Json): string {
    let out = '';
    if (this.open?.kind !== kind) {
      out += this.stopOpen();
      const index = this.nextIndex++;
      this.open = { kind, index };
      const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      out += namedEvent('content_block_start', { index, content_block: block });
    }
    return out + namedEvent('content_block_delta', { index: this.open.index, delta });
  }

  private toolDelta(call: Json): string {
    const at = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let index = this.tools.get(at);
    if (index === undefined) {
      out += this.stopOpen();
      index = this.nextIndex++;
      this.tools.set(at, index);
      this.openTools.push(index);
      const id = typeof call.id === 'string' ? call.id : `toolu_${index}`;
      out += namedEvent('content_block_start', { index, content_block: { type: 'tool_use', id, name: typeof fn.name === 'string' ? fn.name : '', input: {} } });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') out += namedEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
    return out;
  }

  /** Stops the open blocks: a new one begins (parallel tool calls arrive one after the other). */
  private stopOpen(): string {
    let out = '';
    if (this.open !== null) out += namedEvent('content_block_stop', { index: this.open.index });
    this.open = null;
    for (const index of this.openTools.splice(0)) out += namedEvent('content_block_stop', { index });
    return out;
  }

  protected close(): string {
    let out = this.started ? '' : namedEvent('message_start', { message: { id: 'msg_translated', type: 'message', role: 'assistant', model: '', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } });
    out += this.stopOpen();
    out += namedEvent('message_delta', { delta: this.finish ?? { stop_reason: 'end_turn', stop_sequence: null }, usage: this.usage });
    return out + namedEvent('message_stop', {});
  }
}
