/**
 * The clients' limits, per process (several replicas each hold their own): requests
 * and tokens over the last 60 seconds (a sliding window: each request and each
 * answer's tokens count until a minute after they happened), and requests under way.
 * The clock is passed in, so the windows are tested without waiting.
 *
 * Tokens are known only when an answer ends (its usage, or an estimate when the
 * provider reports none: observe/token-estimate.ts): a request is let in while the minute's
 * tokens are under `tpm`, and its own tokens count from its end.
 */
import type { ErrorFamily } from '../errors.js';
import type { ClientRule } from './rules.js';

const WINDOW_MS = 60_000;

interface State {
  active: number;
  /** When each request of the window started, oldest first. */
  starts: number[];
  /** Tokens of answers that ended in the window, oldest first. */
  tokens: { at: number; n: number }[];
}

/** A refused request: which limit, and when to come back. */
export interface Refusal {
  limit: 'rpm' | 'tpm' | 'max_concurrent';
  retryAfterSeconds: number;
  message: string;
}

/** The rate headers for a client at a moment: OpenAI's `x-ratelimit-*`, and Anthropic's `anthropic-ratelimit-*` for its endpoints. */
export type RateHeaders = [string, string][];

export class ClientLimiter {
  private readonly states = new Map<string, State>();

  constructor(private readonly now: () => number = Date.now) {}

  private stateOf(name: string, at: number): State {
    let s = this.states.get(name);
    if (s === undefined) this.states.set(name, (s = { active: 0, starts: [], tokens: [] }));
    const from = at - WINDOW_MS;
    while ((s.starts[0] ?? Infinity) <= from) s.starts.shift();
    while ((s.tokens[0]?.at ?? Infinity) <= from) s.tokens.shift();
    return s;
  }

  /** Takes a place for one request, or says which limit refuses it. Each taken place is given back with `release`. */
  take(rule: ClientRule): Refusal | null {
    const at = this.now();
    const s = this.stateOf(rule.name, at);
    if (rule.maxConcurrent !== null && s.active >= rule.maxConcurrent) {
      return { limit: 'max_concurrent', retryAfterSeconds: 1, message: `client "${rule.name}" has ${s.active} requests under way, its max_concurrent; retry when one ends` };
    }
    if (rule.rpm !== null && s.starts.length >= rule.rpm) {
      // The start that leaves the window next makes room (there are at least rpm of them).
      const wait = (s.starts[s.starts.length - rule.rpm] ?? at) + WINDOW_MS - at;
      return { limit: 'rpm', retryAfterSeconds: seconds(wait), message: `client "${rule.name}" made ${s.starts.length} requests in the last minute, its rpm of ${rule.rpm}; retry in ${seconds(wait)} s` };
    }
    if (rule.tpm !== null) {
      const used = sum(s.tokens);
      if (used >= rule.tpm) {
        const wait = this.tokenWait(s, rule.tpm, at);
        return { limit: 'tpm', retryAfterSeconds: seconds(wait), message: `client "${rule.name}" used ${used} tokens in the last minute, its tpm of ${rule.tpm}; retry in ${seconds(wait)} s` };
      }
    }
    s.active += 1;
    s.starts.push(at);
    return null;
  }

  /** The request ended; `tokens` is its usage (input and output), 0 when the provider reported none. */
  release(rule: ClientRule, tokens: number): void {
    const at = this.now();
    const s = this.stateOf(rule.name, at);
    s.active = Math.max(0, s.active - 1);
    if (tokens > 0) s.tokens.push({ at, n: tokens });
  }

  /**
   * The client's rate headers now, for the limits it has: OpenAI's names and formats
   * (what SDKs read; the reset as Go writes a duration: `30s`, `1m0s`, `250ms`) on every
   * answer, and Anthropic's too where the client speaks its format (`family`), the reset
   * there an RFC 3339 time. The reset is when the window next has room: when its oldest
   * request (or tokens) leave it.
   */
  headers(rule: ClientRule, family: ErrorFamily = 'openai'): RateHeaders {
    const at = this.now();
    const s = this.stateOf(rule.name, at);
    const out: RateHeaders = [];
    const anthropic = family === 'anthropic';
    if (rule.rpm !== null) {
      const oldest = s.starts[0];
      const limit = String(rule.rpm);
      const remaining = String(Math.max(0, rule.rpm - s.starts.length));
      const reset = oldest === undefined ? 0 : Math.max(0, oldest + WINDOW_MS - at);
      out.push(['x-ratelimit-limit-requests', limit], ['x-ratelimit-remaining-requests', remaining], ['x-ratelimit-reset-requests', goDuration(reset)]);
      if (anthropic) out.push(['anthropic-ratelimit-requests-limit', limit], ['anthropic-ratelimit-requests-remaining', remaining], ['anthropic-ratelimit-requests-reset', rfc3339(at + reset)]);
    }
    if (rule.tpm !== null) {
      const used = sum(s.tokens);
      const limit = String(rule.tpm);
      const remaining = String(Math.max(0, rule.tpm - used));
      const reset = used === 0 ? 0 : this.tokenWait(s, rule.tpm, at);
      out.push(['x-ratelimit-limit-tokens', limit], ['x-ratelimit-remaining-tokens', remaining], ['x-ratelimit-reset-tokens', goDuration(reset)]);
      if (anthropic) out.push(['anthropic-ratelimit-tokens-limit', limit], ['anthropic-ratelimit-tokens-remaining', remaining], ['anthropic-ratelimit-tokens-reset', rfc3339(at + reset)]);
    }
    return out;
  }

  /** How long until the window's tokens fall under `tpm` (the oldest entries leaving first). */
  private tokenWait(s: State, tpm: number, at: number): number {
    let used = sum(s.tokens);
    for (const t of s.tokens) {
      used -= t.n;
      if (used < tpm) return t.at + WINDOW_MS - at;
    }
    return 0;
  }
}

const sum = (list: readonly { n: number }[]): number => list.reduce((a, t) => a + t.n, 0);
const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** A span of milliseconds as Go writes a duration, which is how OpenAI's API writes its resets: `0s`, `250ms`, `1.5s`, `59s`, `1m0s`. */
export function goDuration(ms: number): string {
  const whole = Math.ceil(ms);
  if (whole <= 0) return '0s';
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const rest = `${(whole - minutes * 60_000) / 1000}s`;
  return minutes === 0 ? rest : `${minutes}m${rest}`;
}

/** A moment as an RFC 3339 time in whole seconds (rounded up: the reset has passed by then), as Anthropic's API writes its resets. */
const rfc3339 = (ms: number): string => new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
