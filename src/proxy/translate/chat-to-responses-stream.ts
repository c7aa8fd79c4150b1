/**
 * A chat-completion stream as a Responses API event stream, event by event:
 *
 *   first chunk ▶ response.created, response.in_progress
 *   content ▶ (output_item.added + content_part.added for the message item, once) output_text.delta
 *   reasoning_content ▶ the same for a reasoning item (reasoning_text parts), reasoning_text.delta
 *   tool_calls[i] first seen ▶ the open item is done; output_item.added (function_call)
 *   tool_calls[i].function.arguments ▶ function_call_arguments.delta
 *   [DONE], or the end after a finish_reason ▶ the open items done; response.completed
 *     (response.incomplete for finish_reason "length"), usage included
 *   the end before a finish_reason, or an error chunk ▶ `data: {"error": …}` (what the
 *     openai client raises from), nothing after it
 *
 * Every event carries its sequence_number, as the API's do.
 */
import { errorJson, type ProxyError } from '../errors.js';
import { callItem, messageItem, reasoningItem, responseObject, responsesUsage, type ResponsesContext } from './chat-to-responses-answer.js';
import { isObject, type Json } from './shape.js';
import { FromChatStream, type ChatChunk } from './from-chat-stream.js';

type Item = { kind: 'message' | 'reasoning'; index: number; id: string; text: string } | { kind: 'call'; index: number; id: string; callId: string; name: string; args: string };

export class ChatToResponsesStream extends FromChatStream {
  private seq = 0;
  private id = 'resp_translated';
  private model: unknown = '';
  private created = Math.floor(Date.now() / 1000);
  private started = false;
  private open: Item | null = null;
  private readonly output: Json[] = [];
  private readonly calls = new Map<number, Item & { kind: 'call' }>();
  private finish: string | null = null;
  private usage: Json | null = null;

  constructor(private readonly ctx: ResponsesContext) {
    super();
  }

  protected chunk(read: ChatChunk): string {
    const { chunk, delta } = read;
    let out = '';
    if (!this.started) {
      this.started = true;
      if (typeof chunk.id === 'string') this.id = `resp_${chunk.id}`;
      if (typeof chunk.created === 'number') this.created = chunk.created;
      this.model = chunk.model ?? '';
      const response = this.response('in_progress', []);
      out += this.ev('response.created', { response }) + this.ev('response.in_progress', { response });
    }
    if (read.usage !== null) this.usage = responsesUsage(read.usage);
    if (delta === null) return out;
    if (delta.reasoning !== '') out += this.text(delta.reasoning, 'reasoning');
    if (delta.content !== '') out += this.text(delta.content, 'message');
    for (const call of delta.toolCalls) out += this.call(call);
    if (delta.finishReason !== null) this.finish = String(delta.finishReason);
    return out;
  }

  protected finished(): boolean {
    return this.finish !== null;
  }

  protected errorEvent(e: ProxyError): string {
    return `data: ${errorJson(e)}\n\n`;
  }

  /** A delta of the answer's text or of its reasoning, each in an item of its own kind. */
  private text(delta: string, kind: 'message' | 'reasoning'): string {
    let out = '';
    if (this.open?.kind !== kind) {
      out += this.closeOpen();
      const item: Item = { kind, index: this.output.length, id: `${kind === 'message' ? 'msg' : 'rs'}_${this.id.slice(5)}_${this.output.length}`, text: '' };
      this.output.push({});
      this.open = item;
      const added = kind === 'message' ? messageItem(item.id, '', 'in_progress') : reasoningItem(item.id, '', 'in_progress');
      out += this.ev('response.output_item.added', { output_index: item.index, item: added });
      out += this.ev('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: 0, part: partOf(kind, '') });
    }
    const item = this.open as Item & { kind: 'message' | 'reasoning' };
    item.text += delta;
    const ids = { item_id: item.id, output_index: item.index, content_index: 0, delta };
    return out + (kind === 'message' ? this.ev('response.output_text.delta', { ...ids, logprobs: [] }) : this.ev('response.reasoning_text.delta', ids));
  }

  private call(call: Json): string {
    const at = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let item = this.calls.get(at);
    if (item === undefined) {
      out += this.closeOpen();
      const callId = typeof call.id === 'string' ? call.id : `call_${at}`;
      item = { kind: 'call', index: this.output.length, id: `fc_${callId}`, callId, name: typeof fn.name === 'string' ? fn.name : '', args: '' };
      this.output.push({});
      this.calls.set(at, item);
      this.open = item;
      out += this.ev('response.output_item.added', { output_index: item.index, item: callItem(item.id, callId, item.name, '', 'in_progress') });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      item.args += fn.arguments;
      out += this.ev('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: fn.arguments });
    }
    return out;
  }

  /** The open item's closing events; its final form goes into the output list. */
  private closeOpen(): string {
    const item = this.open;
    if (item === null) return '';
    this.open = null;
    if (item.kind !== 'call') {
      const message = item.kind === 'message';
      const done = message ? messageItem(item.id, item.text, 'completed') : reasoningItem(item.id, item.text, 'completed');
      this.output[item.index] = done;
      const ids = { item_id: item.id, output_index: item.index, content_index: 0 };
      return (
        (message ? this.ev('response.output_text.done', { ...ids, text: item.text, logprobs: [] }) : this.ev('response.reasoning_text.done', { ...ids, text: item.text })) +
        this.ev('response.content_part.done', { ...ids, part: partOf(item.kind, item.text) }) +
        this.ev('response.output_item.done', { output_index: item.index, item: done })
      );
    }
    const done = callItem(item.id, item.callId, item.name, item.args, 'completed');
    this.output[item.index] = done;
    return this.ev('response.function_call_arguments.done', { item_id: item.id, output_index: item.index, name: item.name, arguments: item.args }) + this.ev('response.output_item.done', { output_index: item.index, item: done });
  }

  protected close(): string {
    let out = this.started ? '' : this.ev('response.created', { response: this.response('in_progress', []) });
    out += this.closeOpen();
    const status = this.finish === 'length' ? 'incomplete' : 'completed';
    return out + this.ev(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: this.response(status, this.output) });
  }

  private response(status: 'in_progress' | 'completed' | 'incomplete', output: Json[]): Json {
    return responseObject(this.id, this.model, this.created, this.ctx, status, output, status === 'in_progress' ? null : this.usage);
  }

  private ev(type: string, value: Json): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...value })}\n\n`;
  }
}

const partOf = (kind: 'message' | 'reasoning', text: string): Json => (kind === 'message' ? { type: 'output_text', text, annotations: [], logprobs: [] } : { type: 'reasoning_text', text });
