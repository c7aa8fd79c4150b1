import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorFamily } from '../errors.js';
import type { Provider } from './provider.js';
import type { UpstreamPool } from './upstream.js';

/** Why a provider could not serve a request, seen before anything reached the client. */
export type FallbackReason =
  | { kind: 'unreachable'; code: string }
  | { kind: 'timeout' }
  /** It answered 429 or 5xx. */
  | { kind: 'status'; status: number; rawHeaders: readonly string[] };

/** What the relay tells the request's record (observe/request-record.ts). */
export interface RelayObserver {
  /** A piece of the answer's body on its way to the client. */
  tap(chunk: Buffer): void;
  /** A piece of the provider's answer as it came (decoded), before anything of it was left out or translated: where its usage is read. */
  read(chunk: Buffer): void;
  /** The request body's size as the provider got it (for an estimate of its tokens). */
  sent(bytes: number): void;
  /**
   * The answer's tokens count against a client's `tpm`: a stream of chat or completions
   * is asked for its usage (`stream_options.include_usage`) when the client did not ask,
   * and what the client did not ask for is kept from it.
   */
  readonly metered: boolean;
  /** The exchange under way, told when the client's connection closes. */
  watch(relay: { onClientClose(): void }): void;
  /** The answer had begun and was cut short: the provider died, fell silent or ended mid-event. */
  cut(): void;
}

/** Everything one proxied request needs. */
export interface RelayRequest {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  provider: Provider;
  pool: UpstreamPool;
  /** POST unless said otherwise (a stored response is read or deleted by id). */
  method?: 'GET' | 'POST' | 'DELETE';
  /** The request body as the upstream gets it (bare model name); null: none. */
  payload: Buffer | null;
  /** Its content type when not JSON (a multipart upload's, with its boundary). */
  contentType?: string | undefined;
  /** The path under the provider's base URL; `/chat/completions` when absent. */
  endpoint?: string;
  /** The client headers passed on (`forwardedNames`: the built-in ones and `proxy.forward_headers`). */
  forwarded: readonly string[];
  /** Whose error shape the client reads (the endpoint's). */
  family?: ErrorFamily;
  /**
   * Whether the request may still go to another target (this is not its last): then a
   * failure before anything reached the client (unreachable, a timeout before the
   * head, a 429 or 5xx) ends the relay without a word to the client, settled as
   * `declined`, and the caller takes it elsewhere. False: such failures are answered.
   */
  fallible: boolean;
  /**
   * The request's record: told each piece of the provider's answer as it comes (its
   * usage) and of the body as it goes to the client (time to first byte), and the one
   * that hears the client leave (one close listener per request, whichever attempt is
   * under way).
   */
  observer: RelayObserver;
  /** "; 127.0.0.1:11434 is the local end of tunnel 'llm' (…), which is RETRYING, not RUNNING" or "": appended to 502 messages. */
  tunnelHint(): string;
  log?(entry: Record<string, unknown>): void;
}

/**
 * How a relay settled, told once to whoever started it (`startRelay` resolves with
 * it); the relay knows nothing of its caller.
 */
export type Settled =
  /** Nothing reached the client and nothing will: the caller answers the request another way. */
  | { kind: 'declined'; why: FallbackReason }
  /** The provider's status line came and the relay took it (passed on, held, or refused with the proxy's error). */
  | { kind: 'answered'; status: number; rawHeaders: readonly string[] }
  /** The relay ended before a status line: the proxy's own error answer, or the client left. */
  | { kind: 'ended' };
