import type { Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';

/**
 * The plug of a relay (relay.ts) that turns a provider's answer into the client's
 * format. The relay does everything else for every answer — the request, the timer,
 * the abort, the usage read from the provider's bytes, SSE framing and its overflow,
 * the key masked, the proxy's errors — and asks the plug only for the bytes the client
 * gets. The interface lives here and translate/ implements it (translate/answer-plug.ts),
 * so the relay knows no format: the stages depend one way (eslint.config.js).
 *
 * IDENTITY is the plug of an answer that passes as the provider sent it; the relay
 * looks at the plug once per answer, so that such an answer costs nothing per piece.
 */
export interface BodyTranslation {
  readonly kind: 'translated';
  /** The path of the request on the provider, from its base path (`/v1`); the client's query string stays behind (it belongs to the client's API). */
  upstreamPath(basePath: string): string;
  /** Headers the provider's API requires, sent when the client sent none of that name. */
  readonly defaultHeaders: readonly (readonly [string, string])[];
  /** Request fields left out, named in `x-tunnel-manager-dropped` on the answer. */
  readonly dropped: readonly string[];
  /** A whole 2xx answer (its body as text) in the client's format, as JSON text; or the error the client gets instead. */
  whole(text: string, status: number, prefix: string): Result<string, ProxyError>;
  /** A fresh translator for one streamed answer. */
  stream(): EventTranslation;
  /** A provider's error answer (its body as text, the key blanked out) as the client's error. */
  error(status: number, text: string, prefix: string): ProxyError;
}

/** One streamed answer's translation, fed the provider's whole events in order (as sse-frames.ts cuts them). */
export interface EventTranslation {
  /** The client's events for these whole events of the provider ('' when they make none yet); also fed the stream's tail when it ends. */
  events(whole: Buffer): string;
  /** The provider ended its stream: the closing events, or null when it ended before its answer did (a cut). */
  end(): string | null;
  /** The stream cannot go on: the client format's error event (nothing follows it). */
  fail(e: ProxyError): string;
}

/** The answer passes as the provider sent it (whole events only, the key masked, usage the client did not ask for left out). */
export const IDENTITY = { kind: 'identity' } as const;

/** How a relay carries the answer's body: as it came, or translated. */
export type AnswerBody = typeof IDENTITY | BodyTranslation;
