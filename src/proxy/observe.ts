import type { ServerResponse } from 'node:http';
import type { ProxyMetrics } from './metrics.js';
import { createUsageReader, type Usage } from './usage.js';

const MAX_LOGGED_MODEL = 256;

/** What the routing layer tells the record of one request as it goes. */
export interface Observation {
  /** The model as the client named it. */
  model: string | null;
  /** The provider that got the request last (the one that answered, when one did). */
  provider: string | null;
  /** Each piece of the answer's body as it reaches the client. */
  tap(chunk: Buffer): void;
  /** A target passed over for the next one. */
  fellBack(provider: string, reason: string): void;
}

/**
 * One log line (`proxy_request`) and the request series per request, written when
 * the response is over — finished, cut or abandoned by the client. The answer's
 * usage is read as it passes (see usage.ts), never held back.
 */
export function observeRequest(o: {
  requestId: string;
  endpoint: string;
  res: ServerResponse;
  log?: (entry: Record<string, unknown>) => void;
  metrics?: ProxyMetrics;
}): Observation {
  const started = performance.now();
  let firstByte: number | null = null;
  let reader: ReturnType<typeof createUsageReader> | null = null;
  const fallbacks: { provider: string; reason: string }[] = [];
  const obs: Observation = {
    model: null,
    provider: null,
    tap(chunk) {
      if (firstByte === null) {
        firstByte = performance.now();
        // An event stream starts with a field name or a comment; JSON with a brace or a bracket.
        const head = chunk.toString('latin1', 0, Math.min(chunk.length, 16)).trimStart();
        reader = createUsageReader(!(head.startsWith('{') || head.startsWith('[')));
      }
      reader?.chunk(chunk);
    },
    fellBack(provider, reason) {
      fallbacks.push({ provider, reason });
      o.metrics?.fallbacks.inc({ provider, reason });
    },
  };
  o.res.once('close', () => {
    const ms = performance.now() - started;
    const status = o.res.headersSent ? o.res.statusCode : null;
    const usage: Usage = reader?.result() ?? { input: null, output: null };
    if (o.log !== undefined) {
      const entry: Record<string, unknown> = {
        event: 'proxy_request',
        request_id: o.requestId,
        endpoint: o.endpoint,
        // A client's model name can be as long as its body; the log keeps enough to recognise it.
        model: obs.model !== null && obs.model.length > MAX_LOGGED_MODEL ? `${obs.model.slice(0, MAX_LOGGED_MODEL)}…` : obs.model,
        provider: obs.provider,
        status,
        // Sent in full, or cut short (by the client, or by a provider that died mid-answer).
        complete: o.res.writableFinished,
        ms: Math.round(ms * 10) / 10,
        ttfb_ms: firstByte === null ? null : Math.round((firstByte - started) * 10) / 10,
      };
      if (usage.input !== null) entry.tokens_in = usage.input;
      if (usage.output !== null) entry.tokens_out = usage.output;
      if (fallbacks.length > 0) entry.fallbacks = fallbacks;
      o.log(entry);
    }
    o.metrics?.record({
      provider: obs.provider ?? 'none',
      endpoint: o.endpoint,
      status: status === null ? 'client_closed' : String(status),
      seconds: ms / 1000,
      ttfbSeconds: firstByte === null ? null : (firstByte - started) / 1000,
      tokensIn: usage.input,
      tokensOut: usage.output,
    });
  });
  return obs;
}
