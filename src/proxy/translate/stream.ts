import type { ProxyError } from '../errors.js';
import type { Result } from '../../kernel/result.js';
import type { Json } from './shape.js';
import type { SseEvent } from './sse-events.js';

/** One answer stream's translation, fed the provider's events in order. */
export interface StreamTranslator {
  /** The client's events for one provider event ('' when it makes none yet). */
  event(e: SseEvent): string;
  /** The provider ended its stream: the closing events, or null when it ended before its answer did (a cut). */
  end(): string | null;
  /** The stream cannot go on: the client format's error event (nothing follows it). */
  fail(e: ProxyError): string;
}

/** How the answers of one translated request come back into the client's format. */
export interface AnswerTranslation {
  /** A whole (non-streamed) answer. */
  json(body: Json): Result<Json, ProxyError>;
  /** A fresh translator for a streamed answer. */
  stream(): StreamTranslator;
  /** The client's error for a provider's error answer, when it is not the provider's own (a missing endpoint, say). */
  error?(status: number, e: ProxyError, prefix: string): ProxyError;
}
