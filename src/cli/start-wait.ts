/**
 * `start`, `start-tunnel` and the start half of the restarts: POST the start and,
 * unless --no-wait, follow /events until every started tunnel is RUNNING (0) or one
 * ends FAILED or STOPPED (1). An interactive tunnel ends the wait at AUTH_REQUIRED
 * (0, with the advice to run auth) only when its login shows a prompt (login-peek.ts). The stream is opened before the POST, so no change can
 * slip between the two.
 */
import { statusListSchema, statusRecordSchema } from '../api/schemas.js';
import type { StatusRecord } from '../api/types.js';
import { ok } from '../kernel/result.js';
import { openEvents } from './client.js';
import { EXIT, formatOptions, print, say, type CommandContext } from './context.js';
import { ask, failure, isLoadingAnswer, whileLoading } from './exchange.js';
import type { Peek } from './login-peek.js';
import { formatProgress, formatRecordLine, formatStatus, shortHash } from './format.js';
import { WaitTracker, type WaitOutcome } from './wait.js';
import { unreachable } from '../kernel/unreachable.js';

/** Every tunnel (`POST /start`) or one (`POST /start/<hash>`). */
export type StartWhat = { kind: 'all' } | { kind: 'one'; hash: string };

const pathOf = (what: StartWhat) => (what.kind === 'all' ? '/start' : `/start/${encodeURIComponent(what.hash)}`);
const schemaOf = (what: StartWhat) => (what.kind === 'all' ? statusListSchema : statusRecordSchema);

export async function startAndWait(ctx: CommandContext, what: StartWhat): Promise<number> {
  const single = what.kind === 'one';
  const show = (raw: string, records: StatusRecord[]) =>
    print(ctx, raw, () => (single ? records.map((r) => formatRecordLine(r, formatOptions(ctx))).join('') : formatStatus(records, formatOptions(ctx))));

  if (!ctx.wait) {
    const answer = await ask(ctx, 'POST', pathOf(what), schemaOf(what));
    if (!answer.ok) return answer.error;
    show(answer.value.raw, ([] as StatusRecord[]).concat(answer.value.value));
    return EXIT.ok;
  }

  const opened = await whileLoading(ctx, () => openEvents(ctx.target), (r) => !r.ok && !('reason' in r.error) && isLoadingAnswer(r.error));
  if (!opened.ok) return opened.error;
  const events = opened.value;
  if (!events.ok) {
    const e = events.error;
    return 'reason' in e ? failure(ctx, { ok: false, error: e }) : failure(ctx, ok(e));
  }
  const stream = events.value;
  const tracker = new WaitTracker();
  const raw = new Map<string, string>();
  const early: StatusRecord[] = [];
  let answered = false;
  let wake: (() => void) | null = null;
  let streamEnded = false;
  let malformed: string | null = null;

  // On a terminal, one line on stderr rewritten in place, erased before the result.
  const began = ctx.io.now().getTime();
  let progressShown = false;
  const progress = () => {
    if (!ctx.io.progress || !answered) return;
    const o = formatOptions(ctx);
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
      let data: unknown;
      try {
        data = JSON.parse(i.data);
      } catch {
        data = undefined;
      }
      const r = statusRecordSchema.safeParse(data);
      if (!r.success) {
        malformed ??= `a status event from the daemon is not what this tunnel-cli expects: ${JSON.stringify(i.data.slice(0, 200))}`;
        wake?.();
        return;
      }
      raw.set(r.data.hash, i.data);
      if (!answered) early.push(r.data);
      else if (tracker.event(r.data)) progress();
      wake?.();
    },
    end() {
      streamEnded = true;
      wake?.();
    },
  });

  let ticker: NodeJS.Timeout | null = null;
  try {
    const answer = await ask(ctx, 'POST', pathOf(what), schemaOf(what));
    if (!answer.ok) return answer.error;
    const all = ([] as StatusRecord[]).concat(answer.value.value);
    tracker.answer(single ? all : all.filter((r) => r.status !== 'STOPPED'));
    // An event seen since the subscription is newer than the answer (see WaitTracker).
    if (single && all[0] && !raw.has(all[0].hash)) raw.set(all[0].hash, answer.value.raw);
    answered = true;
    for (const r of early) tracker.event(r);
    progress();
    if (ctx.io.progress) ticker = setInterval(progress, 1000);

    const deadline = Date.now() + ctx.timeoutMs;
    const peeked = new Set<string>();
    let outcome: WaitOutcome | null = tracker.outcome();
    for (;;) {
      // AUTH_REQUIRED with an ssh running (its own, or the login it shares with the other
      // interactive tunnels to its host): a person is needed only if it shows a prompt.
      const loginRuns = (r: StatusRecord): boolean => r.pid !== null || (r.connection !== null && r.connection.pid !== null);
      const unsure = outcome?.kind === 'login' ? outcome.waiting.filter((r) => loginRuns(r) && !peeked.has(r.hash)) : [];
      for (const r of unsure) {
        peeked.add(r.hash);
        // Loaded here only: the WebSocket client costs every other command its start-up time.
        const { peekLogin } = await import('./login-peek.js');
        if (personNeeded(await peekLogin(ctx.target, r.hash, Math.max(0, deadline - Date.now())))) continue;
        tracker.loginWithoutPrompt(r.hash);
      }
      if (unsure.length > 0) outcome = tracker.outcome();
      if (outcome !== null || streamEnded || malformed !== null || Date.now() >= deadline) break;
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
    if (malformed !== null) {
      say(ctx, malformed);
      return EXIT.failed;
    }
    if (outcome === null && streamEnded) {
      say(ctx, 'the daemon closed the event stream before the tunnels were up (did it stop?)');
      return EXIT.unreachable;
    }
    outcome ??= tracker.timedOut();

    // The final records: for one tunnel its record exactly as the daemon sent it; for all, GET /status.
    if (single) {
      const r = outcome.records[0];
      if (r) show(raw.get(r.hash) ?? JSON.stringify(r), [r]);
    } else {
      const statuses = await ask(ctx, 'GET', '/status', statusListSchema);
      if (!statuses.ok) return statuses.error;
      show(statuses.value.raw, statuses.value.value);
    }
    return verdict(ctx, outcome);
  } finally {
    if (ticker) clearInterval(ticker);
    clearProgress();
    stream.close();
  }
}

/**
 * What a look at a login's terminal says: a prompt (or a person at it, or a login that
 * ended waiting for one) needs a person; a login that ends by itself, or ssh still
 * quiet, is waited for as any start (its status events tell the rest). A look that
 * failed keeps the advice to run auth.
 */
function personNeeded(p: Peek): boolean {
  switch (p.kind) {
    case 'prompt':
    case 'busy':
    case 'error':
      return true;
    case 'ended':
      return p.status === 'AUTH_REQUIRED';
    case 'quiet':
      return false;
    default:
      return unreachable(p, 'peek');
  }
}

/** The exit code of a wait, with a line for each tunnel that did not come up. */
function verdict(ctx: CommandContext, outcome: WaitOutcome): number {
  switch (outcome.kind) {
    case 'running':
      return EXIT.ok;
    case 'failed':
      for (const r of outcome.failed) {
        const who = `${r.name} (${shortHash(r.hash)})`;
        say(ctx, r.status === 'STOPPED' ? `${who} was stopped while waiting for it to start` : `${who} FAILED: ${r.last_error ?? 'no reason given'}`);
      }
      return EXIT.failed;
    case 'login':
      // Started as asked; the rest is a person's to do, in this terminal or the panel.
      for (const r of outcome.waiting) say(ctx, `${r.name} (${shortHash(r.hash)}) waits for a login (password or one-time code): run tunnel-cli auth ${shortHash(r.hash)}`);
      return EXIT.ok;
    case 'pending': {
      const which = outcome.pending.map((r) => `${r.name} (${shortHash(r.hash)}) is ${r.status}${r.last_error ? ` (${r.last_error})` : ''}`);
      say(ctx, `gave up waiting after ${ctx.timeoutMs / 1000} s: ${which.join('; ')}; the daemon keeps trying`);
      return EXIT.failed;
    }
    default:
      return unreachable(outcome, 'outcome');
  }
}
