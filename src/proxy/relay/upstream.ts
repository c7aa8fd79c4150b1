import { Agent } from 'undici';

/**
 * The proxy's HTTP client for its providers, on undici's dispatcher: keep-alive
 * connections pooled per origin, the response parsed once (llhttp), and its body
 * handed on as the bytes arrive, with pause/resume for a slow client. It sits at
 * the dispatcher level rather than `fetch` or `request` because those wrap every
 * chunk in a stream object, which costs more per request than the rest of a
 * proxied request (see BENCHMARKS.md). Timeouts stay with the caller, which aborts.
 */

/** Where a provider lives. */
export interface Origin {
  protocol: 'http:' | 'https:';
  /** Bare host name or address (no IPv6 brackets), for messages. */
  hostname: string;
  port: number;
  /** `host[:port]` as the base URL spells it (IPv6 in brackets). */
  host: string;
  /** `protocol//host`, the pool's key: made once per provider, not per request. */
  url: string;
}

/** One request. Header values must already be free of CR, LF and other control characters. */
export interface UpstreamCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** `[name, value, …]`, lower-case names, each once; the call takes the list over (content-length is appended to it). */
  headers: string[];
  body: Buffer | null;
  /** How long the connection is kept idle afterwards (the provider's `keep_alive`); 0: closed after this request. */
  keepAliveMs: number;
}

/** Why an exchange failed. `answered`: the status line had arrived (so the client may have it already). */
export interface UpstreamFailure {
  code: string;
  message: string;
  answered: boolean;
}

/** What the caller learns about its exchange, in this order: head, data…, then end or fail (exactly one). */
export interface ExchangeSink {
  head(status: number, rawHeaders: string[]): void;
  data(chunk: Buffer): void;
  end(): void;
  fail(failure: UpstreamFailure): void;
}

export interface Exchange {
  /** Ends the exchange at once and closes its connection; no callback follows. */
  abort(): void;
  /** Stops reading the response (TCP then pushes back on the upstream). */
  pause(): void;
  resume(): void;
}

export interface UpstreamPool {
  request(origin: Origin, call: UpstreamCall, sink: ExchangeSink): Exchange;
  /** Closes the idle connections. */
  close(): void;
}

/**
 * How long an idle connection is kept unless the provider's `keep_alive` says
 * otherwise. Shorter than the idle timeout of the servers providers usually run on:
 * uvicorn (vLLM, SGLang, llama-cpp-python) and llama.cpp's server close after 5 s
 * without saying so in a `Keep-Alive` header. Kept longer, a request sent as the
 * server closes the connection meets the close, and since a POST may have reached the
 * server, it cannot be sent again: the client would get a 502. Closing first costs a
 * new connection after 4 s idle. Servers with a shorter limit (gunicorn's workers
 * close after 2 s) need a shorter `keep_alive`. A server that announces its own
 * timeout (`Keep-Alive: timeout=N`, as Node's does) is trusted for up to N - 1 s.
 */
export const DEFAULT_KEEP_ALIVE_MS = 4_000;
const KEEP_ALIVE_THRESHOLD_MS = 1_000;

/**
 * A failure in the terms the proxy's messages use: the socket error's own code
 * ("ECONNREFUSED", a TLS code…), EOF for a connection closed before any answer,
 * ECONNRESET for one cut mid-answer, EPROTO for an answer that is not HTTP.
 */
function failureOf(e: Error & { code?: string; cause?: unknown }, answered: boolean): UpstreamFailure {
  const cause = e.cause as { code?: string } | undefined;
  if (typeof cause?.code === 'string') return { code: cause.code, message: e.message, answered };
  if (e.code === 'UND_ERR_SOCKET' || e.code === 'UND_ERR_CLOSED') {
    return answered
      ? { code: 'ECONNRESET', message: 'the connection closed before the response was complete', answered }
      : { code: 'EOF', message: 'the connection closed without a response', answered };
  }
  if (e.name === 'HTTPParserError' || e.code?.startsWith('HPE_')) return { code: 'EPROTO', message: `the upstream's answer is not valid HTTP/1.1: ${e.message}`, answered };
  return { code: e.code ?? 'ERROR', message: e.message, answered };
}

function appendLength(headers: string[], length: number): string[] {
  headers.push('content-length', String(length));
  return headers;
}

/** `ca`: extra trusted certificates for https providers (tests use a self-signed one); the system's CAs otherwise. */
export function createUpstreamPool(options: { ca?: string | Buffer } = {}): UpstreamPool {
  // One dispatcher per keep-alive time in use (keep-alive is a connection pool's
  // setting in undici): nearly always just the default's.
  const agents = new Map<number, Agent>();
  const agentFor = (keepAliveMs: number): Agent => {
    let agent = agents.get(keepAliveMs);
    if (agent === undefined) {
      agent = new Agent({
        keepAliveTimeout: Math.max(keepAliveMs, 1),
        keepAliveTimeoutThreshold: KEEP_ALIVE_THRESHOLD_MS,
        // Streams last as long as the upstream keeps talking; the caller's timer bounds them.
        headersTimeout: 0,
        bodyTimeout: 0,
        pipelining: 1,
        connect: { noDelay: true, keepAlive: true, keepAliveInitialDelay: 1000, ...(options.ca ? { ca: options.ca } : {}) },
      });
      agents.set(keepAliveMs, agent);
    }
    return agent;
  };

  function request(origin: Origin, call: UpstreamCall, sink: ExchangeSink): Exchange {
    const exchange = new UndiciExchange(sink);
    agentFor(call.keepAliveMs).dispatch(
      {
        origin: origin.url,
        path: call.path,
        method: call.method,
        headers: call.body === null ? call.headers : appendLength(call.headers, call.body.length),
        body: call.body,
        // A POST is never sent twice: undici moves a request to a new connection only
        // when none of it was written on the old one.
        idempotent: call.method !== 'POST',
        // keep_alive 0: `connection: close`, and the connection is not reused.
        reset: call.keepAliveMs === 0,
      },
      exchange,
    );
    return exchange;
  }

  return {
    request,
    close() {
      for (const agent of agents.values()) void agent.close().catch(() => undefined);
    },
  };
}

/**
 * One exchange: undici's handler and the caller's handle in one object (one
 * allocation per request instead of a closure per callback). It implements the
 * dispatcher's handler interface in its original form (onConnect, onHeaders,
 * onData…), which undici's core calls directly; a handler in the newer form
 * (onRequestStart…) is wrapped per request in an adapter that also parses the
 * head into an object, which costs more than the rest of this class.
 */
/**
 * Where an exchange is: sent, waiting for the status line; answered, its body flowing
 * or paused for a slow client; over, because undici ended it (complete or failed) or
 * the proxy aborted it (`aborted` before undici handed over its abort function is
 * applied the moment it does).
 */
type ExchangeStage = 'requested' | 'flowing' | 'paused' | 'ended' | 'aborted';

class UndiciExchange implements Exchange {
  private stage: ExchangeStage = 'requested';
  private abortRequest: ((e: Error) => void) | null = null;
  private resumeBody: (() => void) | null = null;

  constructor(private readonly sink: ExchangeSink) {}

  private get over(): boolean {
    return this.stage === 'ended' || this.stage === 'aborted';
  }

  /** What undici's callbacks answer: false holds the body back (a slow client). */
  private get flowing(): boolean {
    return this.stage !== 'paused';
  }

  onConnect(abort: (e: Error) => void): void {
    this.abortRequest = abort;
    if (this.stage === 'aborted') abort(new Error('aborted by the proxy'));
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    this.resumeBody = resume;
    if (this.over) return true;
    this.stage = 'flowing';
    const headers = new Array<string>(raw.length);
    for (let i = 0; i < raw.length; i++) headers[i] = raw[i]?.toString('latin1') ?? '';
    this.sink.head(status, headers);
    return this.flowing;
  }

  onData(chunk: Buffer): boolean {
    if (!this.over) this.sink.data(chunk);
    return this.flowing;
  }

  onComplete(): void {
    if (this.over) return;
    this.stage = 'ended';
    this.sink.end();
  }

  onError(e: Error): void {
    if (this.over) return;
    const answered = this.stage !== 'requested';
    this.stage = 'ended';
    this.sink.fail(failureOf(e, answered));
  }

  abort(): void {
    if (this.over) return;
    this.stage = 'aborted';
    this.abortRequest?.(new Error('aborted by the proxy'));
  }

  pause(): void {
    if (this.stage === 'flowing') this.stage = 'paused';
  }

  resume(): void {
    if (this.stage !== 'paused') return;
    this.stage = 'flowing';
    this.resumeBody?.();
  }
}
