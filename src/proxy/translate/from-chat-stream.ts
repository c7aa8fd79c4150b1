/**
 * What every translation of a chat-completion stream does alike, whatever it writes:
 * `[DONE]` closes the answer, a failure (data that is not JSON, the provider's error
 * chunk) ends it with the client format's error event, data that is not an object is
 * skipped, and the end of the stream closes it only after a finish_reason (before one,
 * it is a cut). Once closed or failed, nothing more is written.
 */
import type { ProxyError } from '../errors.js';
import { unreachable } from '../../kernel/unreachable.js';
import { chatStreamEvent, type ChatStreamEvent, type SseEvent } from './sse-events.js';
import type { StreamTranslator } from './stream.js';

/** A chunk of a chat-completion stream, as `chatStreamEvent` reads it. */
export type ChatChunk = Extract<ChatStreamEvent, { kind: 'chunk' }>;

export abstract class FromChatStream implements StreamTranslator {
  private done = false;

  event(e: SseEvent): string {
    if (this.done) return '';
    const read = chatStreamEvent(e);
    switch (read.kind) {
      case 'done':
        return this.finishStream();
      case 'failed':
        return this.fail(read.error);
      case 'nothing':
        return '';
      case 'chunk':
        return this.chunk(read);
      default:
        return unreachable(read, 'chat stream event');
    }
  }

  end(): string | null {
    if (this.done) return '';
    return this.finished() ? this.finishStream() : null;
  }

  fail(e: ProxyError): string {
    this.done = true;
    return this.errorEvent(e);
  }

  private finishStream(): string {
    this.done = true;
    return this.close();
  }

  /** The client's events for one chunk. */
  protected abstract chunk(read: ChatChunk): string;
  /** Whether the provider has given its finish_reason. */
  protected abstract finished(): boolean;
  /** The closing events of the answer (once). */
  protected abstract close(): string;
  /** The client format's error event (once). */
  protected abstract errorEvent(e: ProxyError): string;
}
