import type { ServerResponse } from 'node:http';
import { ownAnswerAt } from './own-answer.js';
import type { ProxyMetrics } from './metrics.js';
import { startTiming, type Timing } from './server-timing.js';
import { estimated, promptTokens, recounted } from './token-estimate.js';
import { createUsageReader, type UsageReader } from './usage.js';
import type { Usage } from './usage-object.js';
import { OWN_JSON, type OwnJson } from '../../kernel/log-entry.js';

const MAX_LOGGED_MODEL = 256;
const [SPACE, TAB, CR, LF, BRACE, BRACKET] = [32, 9, 13, 10, 123, 91];

/** What the routing layer tells the record of one request as it goes. */
export interface Observation {
  /** The model as the client named it. */
  model: string | null;
  /** The provider that got the request last (the one that answered, when one did). */
  provider: string | null;
  /** The client of `proxy.clients` whose key it came with (a log field and a series label), or null. */
  client: string | null;
  /**
   * Told the answer's usage when the request is over: a client's limits count it. Null:
   * none. For a `metered` request whose provider reported none, the estimate (usage.ts).
   */
  onEnd: ((usage: Usage | null) => void) | null;
  /**
   * The answer's tokens count against its client's `tpm`: the relay asks the provider
   * for usage where the client did not, and an answer that reports none is estimated.
   */
  metered: boolean;
  /** Each piece of the answer's body as it reaches the client. */
  tap(chunk: Buffer): void;
  /** Each piece of the provider's answer as it came (decoded), before the proxy left anything out or translated it: its usage is read from these. */
  read(chunk: Buffer): void;
  /** The size of the request body the provider got (the last attempt's): an estimate's prompt. */
  sent(bytes: number): void;
  /** A target passed over for the next one. */
  fellBack(provider: string, reason: string): void;
  /** The exchange under way, told when the client's connection closes (after the record is written). */
  watch(relay: { onClientClose(): void }): void;
  /** The answer had begun and was cut short by its provider. */
  cut(): void;
}

/**
 * The record of one request: one log line (`proxy_request`) and the request series,
 * written when the response is over — finished, cut or abandoned by the client. The
 * answer's usage is read as it passes (see usage.ts), never held back. A class, not
 * a closure per field: one object per request on the hot path.
 */
class RequestObservation implements Observation {
  model: string | null = null;
  provider: string | null = null;
  client: string | null = null;
  onEnd: ((usage: Usage | null) => void) | null = null;
  metered = false;
  private promptBytes = 0;
  private readonly started = performance.now();
  private firstByte = -1;
  private reader: UsageReader | null = null;
  private fallbacks: { provider: string; reason: string }[] | null = null;
  private relay: { onClientClose(): void } | null = null;
  private wasCut = false;
  private readonly timing: Timing;

  constructor(
    private readonly requestId: string,
    private readonly endpoint: string,
    private readonly res: ServerResponse,
    private readonly log: ((entry: Record<string, unknown>) => void) | undefined,
    private readonly metrics: ProxyMetrics | undefined,
  ) {
    this.timing = startTiming(res, this.started);
    res.on('close', () => {
      this.close();
      this.relay?.onClientClose();
    });
  }

  watch(relay: { onClientClose(): void }): void {
    this.relay = relay;
  }

  tap(): void {
    if (this.firstByte < 0) this.firstByte = performance.now();
  }

  read(chunk: Buffer): void {
    (this.reader ??= createUsageReader(!startsJson(chunk), this.metered)).chunk(chunk);
  }

  sent(bytes: number): void {
    this.promptBytes = bytes;
  }

  cut(): void {
    this.wasCut = true;
  }

  fellBack(provider: string, reason: string): void {
    (this.fallbacks ??= []).push({ provider, reason });
    this.metrics?.fellBack(provider, reason);
  }

  private close(): void {
    const ms = performance.now() - this.started;
    const res = this.res;
    const status = res.headersSent ? res.statusCode : null;
    const usage = this.reader?.result() ?? null;
    // The proxy's own answers (its errors) are written whole: their first byte left then.
    const own = this.firstByte < 0 ? ownAnswerAt(res) : undefined;
    const ttfb = this.firstByte >= 0 ? this.firstByte - this.started : own !== undefined ? own - this.started : null;
    const { log, metrics } = this;
    if (log !== undefined) {
      const model = this.model;
      const entry: ProxyRequestEntry = {
        event: 'proxy_request',
        request_id: this.requestId,
        endpoint: this.endpoint,
        // A client's model name can be as long as its body; the log keeps enough to recognise it.
        model: model !== null && model.length > MAX_LOGGED_MODEL ? `${model.slice(0, MAX_LOGGED_MODEL)}…` : model,
        provider: this.provider,
        // Left out when null (JSON has no undefined): no object spread per request.
        client: this.client ?? undefined,
        status,
        // Sent in full, or cut short (by the client, or by a provider that died, fell silent or ended mid-event).
        complete: res.writableFinished && !this.wasCut,
        ms: Math.round(ms * 10) / 10,
        ttfb_ms: ttfb === null ? null : Math.round(ttfb * 10) / 10,
      };
      if (usage !== null && usage.input !== null) entry.tokens_in = usage.input;
      if (usage !== null && usage.output !== null) entry.tokens_out = usage.output;
      if (this.fallbacks !== null) entry.fallbacks = this.fallbacks;
      entry[OWN_JSON] = proxyRequestJson;
      log(entry as unknown as Record<string, unknown>);
    }
    metrics?.record({
      provider: this.provider ?? 'none',
      endpoint: this.endpoint,
      status: status ?? 'client_closed',
      seconds: ms / 1000,
      ttfbSeconds: ttfb === null ? null : ttfb / 1000,
      overheadSeconds: this.timing.overheadSeconds(),
      tokensIn: usage?.input ?? null,
      tokensOut: usage?.output ?? null,
      cut: this.wasCut,
      client: this.client,
    });
    if (this.onEnd !== null) this.onEnd(this.metered ? this.counted(usage, status) : usage);
  }

  /**
   * The tokens a metered answer counts: its usage when it reported either count; for a
   * successful answer of a token endpoint that reported neither, the estimate from the
   * prompt and from what came of the answer (cut short or not: those tokens were made).
   * A stored response read again counts nothing: its tokens counted when it was made.
   */
  private counted(usage: Usage | null, status: number | null): Usage | null {
    if (recounted(this.endpoint)) return null;
    if (usage !== null && (usage.input !== null || usage.output !== null)) return usage;
    if (status === null || status < 200 || status >= 300 || !estimated(this.endpoint)) return usage;
    return { input: promptTokens(this.promptBytes), output: this.reader?.answerTokens() ?? 0 };
  }
}

/** The fields of a `proxy_request` log line, in the order they are written. */
export interface ProxyRequestEntry {
  event: 'proxy_request';
  request_id: string;
  endpoint: string;
  model: string | null;
  provider: string | null;
  client: string | undefined;
  status: number | 'client_closed' | null;
  complete: boolean;
  ms: number;
  ttfb_ms: number | null;
  tokens_in?: number;
  tokens_out?: number;
  fallbacks?: { provider: string; reason: string }[];
  [OWN_JSON]?: OwnJson;
}

const text = (s: string | null): string => (s === null ? 'null' : JSON.stringify(s));
const num = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'null' : String(n));

/**
 * The entry's members as JSON.stringify writes them, made by hand (the log's OWN_JSON, made when the line is written):
 * the strings through JSON.stringify each, the numbers as String writes a finite one
 * (as JSON does).
 */
export function proxyRequestJson(e: ProxyRequestEntry): string {
  let out = `"event":"proxy_request","request_id":${text(e.request_id)},"endpoint":${text(e.endpoint)},"model":${text(e.model)},"provider":${text(e.provider)}`;
  if (e.client !== undefined) out += `,"client":${text(e.client)}`;
  out += `,"status":${typeof e.status === 'string' ? text(e.status) : num(e.status)},"complete":${e.complete ? 'true' : 'false'},"ms":${num(e.ms)},"ttfb_ms":${num(e.ttfb_ms)}`;
  if (e.tokens_in !== undefined) out += `,"tokens_in":${num(e.tokens_in)}`;
  if (e.tokens_out !== undefined) out += `,"tokens_out":${num(e.tokens_out)}`;
  if (e.fallbacks !== undefined) out += `,"fallbacks":${JSON.stringify(e.fallbacks)}`;
  return out;
}

/** Whether a body starts (after white space) as JSON does; an event stream starts with a field name or a comment. */
function startsJson(chunk: Buffer): boolean {
  for (let i = 0; i < chunk.length && i < 16; i++) {
    const b = chunk[i];
    if (b === SPACE || b === TAB || b === CR || b === LF) continue;
    return b === BRACE || b === BRACKET;
  }
  return false;
}

export function observeRequest(o: {
  requestId: string;
  endpoint: string;
  res: ServerResponse;
  log?: (entry: Record<string, unknown>) => void;
  metrics?: ProxyMetrics;
}): Observation {
  return new RequestObservation(o.requestId, o.endpoint, o.res, o.log, o.metrics);
}
