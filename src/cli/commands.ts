import type { ApiErrorBody, HealthBody, ListRecord, LogsBody, LogsListEntry, ReferenceTunnel, ReloadRecord, StatusRecord } from '../api/types.js';
import { err, ok, type Result } from '../result.js';
import { call, openEvents, type ApiResponse, type Unreachable } from './client.js';
import { formatConfigProblem, formatList, formatProgress, formatRecordLine, formatReload, formatStatus, shortHash, type FormatOptions } from './format.js';
import { formatLogs, formatLogsList, formatTunnel, formatValidation, hashOf } from './inspect.js';
import type { Target } from './target.js';
import { WaitTracker, type WaitOutcome } from './wait.js';
import { unreachable } from '../unreachable.js';

/** Exit codes of SPEC §7. */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

/** What a command may touch: output streams and the clock, passed in by main. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Colour on stdout. */
  color: boolean;
  /** Live progress on stderr (a terminal). */
  progress: boolean;
  /** Width of the terminal, for the progress line. */
  columns?: number;
  now(): Date;
}

export interface CommandContext {
  target: Target;
  json: boolean;
  wait: boolean;
  timeoutMs: number;
  io: Io;
}

export type CommandName =
  | 'list'
  | 'status'
  | 'start'
  | 'stop'
  | 'restart'
  | 'start-tunnel'
  | 'stop-tunnel'
  | 'restart-tunnel'
  | 'show-tunnel'
  | 'logs'
  | 'reload'
  | 'validate'
  | 'hash';

const fmt = (ctx: CommandContext): FormatOptions => ({ color: ctx.io.color, now: ctx.io.now() });
const line = (ctx: CommandContext, text: string) => ctx.io.err(`tunnel-cli: ${text}\n`);

function parse<T>(ctx: CommandContext, body: string): Result<T, number> {
  try {
    return ok(JSON.parse(body) as T);
  } catch {
    line(ctx, `the daemon sent an answer that is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
    return err(EXIT.failed);
  }
}

/** Reports an unreachable daemon (3) or an error answer (1); passes a 2xx body on. */
function handle(ctx: CommandContext, r: Result<ApiResponse, Unreachable>): Result<string, number> {
  if (!r.ok) {
    line(ctx, r.error.message);
    return err(EXIT.unreachable);
  }
  const { status, body } = r.value;
  if (status >= 200 && status < 300) return ok(body);
  if (ctx.json) ctx.io.out(body.endsWith('\n') ? body : `${body}\n`);
  let message = `the daemon answered ${status}`;
  try {
    const e = (JSON.parse(body) as ApiErrorBody).error;
    if (typeof e?.message === 'string') message = e.message;
  } catch {
    message += `: ${body.slice(0, 200)}`;
  }
  if (status === 401) message += ' (pass --token or set TUNNEL_API_TOKEN)';
  line(ctx, message);
  return err(EXIT.failed);
}

async function request(ctx: CommandContext, method: string, path: string): Promise<Result<string, number>> {
  return handle(ctx, await call(ctx.target, method, path));
}

const print = (ctx: CommandContext, raw: string, human: () => string) => ctx.io.out(ctx.json ? (raw.endsWith('\n') ? raw : `${raw}\n`) : human());

/** Runs one command; `hash` is already validated; `args` are the positional arguments of `hash`. Resolves with the exit code. */
export async function runCommand(name: CommandName, hash: string | null, ctx: CommandContext, args: readonly string[] = []): Promise<number> {
  const h = encodeURIComponent(hash ?? '');
  switch (name) {
    case 'list': {
      const body = await request(ctx, 'GET', '/list');
      if (!body.ok) return body.error;
      const records = parse<ListRecord[]>(ctx, body.value);
      if (!records.ok) return records.error;
      print(ctx, body.value, () => formatList(records.value));
      return EXIT.ok;
    }
    case 'status': {
      const body = await request(ctx, 'GET', '/status');
      if (!body.ok) return body.error;
      const records = parse<StatusRecord[]>(ctx, body.value);
      if (!records.ok) return records.error;
      if (ctx.json) {
        print(ctx, body.value, () => '');
        return EXIT.ok;
      }
      const health = await request(ctx, 'GET', '/health');
      const config = health.ok ? parse<HealthBody>(ctx, health.value) : null;
      if (config?.ok) ctx.io.out(formatConfigProblem(config.value.config, fmt(ctx)));
      ctx.io.out(formatStatus(records.value, fmt(ctx)));
      return EXIT.ok;
    }
    case 'stop': {
      const body = await request(ctx, 'POST', '/stop');
      if (!body.ok) return body.error;
      const records = parse<StatusRecord[]>(ctx, body.value);
      if (!records.ok) return records.error;
      print(ctx, body.value, () => formatStatus(records.value, fmt(ctx)));
      return EXIT.ok;
    }
    case 'stop-tunnel': {
      const body = await request(ctx, 'POST', `/stop/${h}`);
      if (!body.ok) return body.error;
      const record = parse<StatusRecord>(ctx, body.value);
      if (!record.ok) return record.error;
      print(ctx, body.value, () => formatRecordLine(record.value, fmt(ctx)));
      return EXIT.ok;
    }
    case 'start':
      return start(ctx, '/start', false);
    case 'start-tunnel':
      return start(ctx, `/start/${h}`, true);
    // Stop, then start and wait as start does: the wait then sees only the new start's events.
    case 'restart':
    case 'restart-tunnel': {
      const stopped = await request(ctx, 'POST', name === 'restart' ? '/stop' : `/stop/${h}`);
      if (!stopped.ok) return stopped.error;
      return name === 'restart' ? start(ctx, '/start', false) : start(ctx, `/start/${h}`, true);
    }
    case 'logs': {
      const body = await request(ctx, 'GET', hash === null ? '/logs' : `/logs/${h}`);
      if (!body.ok) return body.error;
      if (hash === null) {
        const entries = parse<LogsListEntry[]>(ctx, body.value);
        if (!entries.ok) return entries.error;
        print(ctx, body.value, () => formatLogsList(entries.value));
        return EXIT.ok;
      }
      const logs = parse<LogsBody>(ctx, body.value);
      if (!logs.ok) return logs.error;
      print(ctx, body.value, () => formatLogs(logs.value));
      return EXIT.ok;
    }
    case 'show-tunnel': {
      const body = await request(ctx, 'GET', `/config/${h}`);
      if (!body.ok) return body.error;
      const tunnel = parse<ReferenceTunnel>(ctx, body.value);
      if (!tunnel.ok) return tunnel.error;
      const status = await request(ctx, 'GET', '/status');
      if (!status.ok) return status.error;
      const records = parse<StatusRecord[]>(ctx, status.value);
      if (!records.ok) return records.error;
      const record = records.value.find((r) => r.hash === tunnel.value.hash) ?? null;
      print(ctx, JSON.stringify({ tunnel: tunnel.value, status: record }), () => formatTunnel(tunnel.value, record));
      return EXIT.ok;
    }
    case 'validate': {
      const body = await request(ctx, 'GET', '/health');
      if (!body.ok) return body.error;
      const health = parse<HealthBody>(ctx, body.value);
      if (!health.ok) return health.error;
      const v = formatValidation(health.value);
      print(ctx, JSON.stringify(health.value.config), () => v.text);
      return v.valid ? EXIT.ok : EXIT.failed;
    }
    case 'hash': {
      const r = hashOf(args);
      if ('error' in r) {
        line(ctx, `hash: ${r.error}`);
        return EXIT.usage;
      }
      print(ctx, JSON.stringify(r), () => `${r.hash}\n`);
      return EXIT.ok;
    }
    case 'reload': {
      const body = await request(ctx, 'POST', '/reload');
      if (!body.ok) return body.error;
      const record = parse<ReloadRecord>(ctx, body.value);
      if (!record.ok) return record.error;
      print(ctx, body.value, () => formatReload(record.value));
      // Entries left out are a config the user has to fix, even though the rest was applied.
      return record.value.left_out > 0 ? EXIT.failed : EXIT.ok;
    }
    default:
      return unreachable(name, 'command');
  }
}

/**
 * POST a start and, unless --no-wait, follow /events until every started tunnel is
 * RUNNING (0) or one ends FAILED or STOPPED (1). The stream is opened before the POST,
 * so no change can slip between the two.
 */
async function start(ctx: CommandContext, path: string, single: boolean): Promise<number> {
  const show = (body: string, records: StatusRecord[]) =>
    print(ctx, body, () => (single ? records.map((r) => formatRecordLine(r, fmt(ctx))).join('') : formatStatus(records, fmt(ctx))));

  if (!ctx.wait) {
    const body = await request(ctx, 'POST', path);
    if (!body.ok) return body.error;
    const records = parse<StatusRecord | StatusRecord[]>(ctx, body.value);
    if (!records.ok) return records.error;
    show(body.value, ([] as StatusRecord[]).concat(records.value));
    return EXIT.ok;
  }

  const events = await openEvents(ctx.target);
  if (!events.ok) {
    const e = events.error;
    if ('reason' in e) {
      line(ctx, e.message);
      return EXIT.unreachable;
    }
    const answer = handle(ctx, ok(e));
    return answer.ok ? EXIT.failed : answer.error;
  }
  const stream = events.value;
  const tracker = new WaitTracker();
  const raw = new Map<string, string>();
  const early: StatusRecord[] = [];
  let answered = false;
  let wake: (() => void) | null = null;
  let streamEnded = false;

  // On a terminal, one line on stderr rewritten in place, erased before the result.
  const began = ctx.io.now().getTime();
  let progressShown = false;
  const progress = () => {
    if (!ctx.io.progress || !answered) return;
    const o = { color: ctx.io.color, now: ctx.io.now() };
    ctx.io.err(`\r\x1b[K${formatProgress(tracker.records(), o.now.getTime() - began, o, ctx.io.columns)}`);
    progressShown = true;
  };
  const clearProgress = () => {
    if (progressShown) ctx.io.err('\r\x1b[K');
    progressShown = false;
  };
  stream.on({
    item(i) {
      if (i.kind !== 'event' || i.event !== 'status') return;
      let r: StatusRecord;
      try {
        r = JSON.parse(i.data) as StatusRecord;
      } catch {
        return;
      }
      raw.set(r.hash, i.data);
      if (!answered) early.push(r);
      else if (tracker.event(r)) progress();
      wake?.();
    },
    end() {
      streamEnded = true;
      wake?.();
    },
  });

  let ticker: NodeJS.Timeout | null = null;
  try {
    const body = await request(ctx, 'POST', path);
    if (!body.ok) return body.error;
    const parsed = parse<StatusRecord | StatusRecord[]>(ctx, body.value);
    if (!parsed.ok) return parsed.error;
    const all = ([] as StatusRecord[]).concat(parsed.value);
    tracker.answer(single ? all : all.filter((r) => r.status !== 'STOPPED'));
    // An event seen since the subscription is newer than the answer (see WaitTracker).
    if (single && all[0] && !raw.has(all[0].hash)) raw.set(all[0].hash, body.value);
    answered = true;
    for (const r of early) tracker.event(r);
    progress();
    if (ctx.io.progress) ticker = setInterval(progress, 1000);

    const deadline = Date.now() + ctx.timeoutMs;
    let outcome: WaitOutcome | null = tracker.outcome();
    while (outcome === null && !streamEnded && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
      outcome = tracker.outcome();
    }
    if (ticker) clearInterval(ticker);
    clearProgress();
    if (outcome === null && streamEnded) {
      line(ctx, 'the daemon closed the event stream before the tunnels were up (did it stop?)');
      return EXIT.unreachable;
    }
    outcome ??= tracker.timedOut();

    // The final records: for one tunnel its record exactly as the daemon sent it; for all, GET /status.
    if (single) {
      const r = outcome.records[0];
      if (r) show(raw.get(r.hash) ?? JSON.stringify(r), [r]);
    } else {
      const status = await request(ctx, 'GET', '/status');
      if (!status.ok) return status.error;
      const records = parse<StatusRecord[]>(ctx, status.value);
      if (!records.ok) return records.error;
      show(status.value, records.value);
    }

    switch (outcome.kind) {
      case 'running':
        return EXIT.ok;
      case 'failed':
        for (const r of outcome.failed) {
          const who = `${r.name} (${shortHash(r.hash)})`;
          line(ctx, r.status === 'STOPPED' ? `${who} was stopped while waiting for it to start` : `${who} FAILED: ${r.last_error ?? 'no reason given'}`);
        }
        return EXIT.failed;
      case 'login':
        // Started as asked; the rest is a person's to do, in this terminal or the panel.
        for (const r of outcome.waiting) line(ctx, `${r.name} (${shortHash(r.hash)}) waits for a login (password or one-time code): run tunnel-cli auth ${shortHash(r.hash)}`);
        return EXIT.ok;
      case 'pending': {
        const which = outcome.pending.map((r) => `${r.name} (${shortHash(r.hash)}) is ${r.status}${r.last_error ? ` (${r.last_error})` : ''}`);
        line(ctx, `gave up waiting after ${ctx.timeoutMs / 1000} s: ${which.join('; ')}; the daemon keeps trying`);
        return EXIT.failed;
      }
      default:
        return unreachable(outcome, 'outcome');
    }
  } finally {
    if (ticker) clearInterval(ticker);
    clearProgress();
    stream.close();
  }
}
