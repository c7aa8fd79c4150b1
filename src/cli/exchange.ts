/**
 * The one path of a request to the daemon: send it, wait out a daemon that is still
 * loading its config file, turn a failure into its exit code with one line on stderr,
 * and check the answer against the API's own schema before a command uses it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { errorBodySchema } from '../api/schemas.js';
import { err, ok, type Result } from '../kernel/result.js';
import { call, type ApiResponse, type Unreachable } from './client.js';
import { EXIT, say, type CommandContext } from './context.js';
import { describeTarget } from './target.js';

/** A checked answer: the value, and the body exactly as sent (what --json prints). */
export interface Answer<T> {
  value: T;
  raw: string;
}

// The daemon says Retry-After: 1; it is local and usually done sooner, so ask more often.
const LOADING_POLL_MS = 200;

/** True for the daemon's 503 `loading` (its first load of the config file still runs). */
export function isLoadingAnswer(r: ApiResponse): boolean {
  if (r.status !== 503) return false;
  const body = parseJson(r.body);
  const e = body.ok ? errorBodySchema.safeParse(body.value) : null;
  return e?.success === true && e.data.error.code === 'loading';
}

/**
 * Runs `attempt` again while the daemon is loading its config file, up to the
 * command's timeout (a note on a terminal meanwhile); then gives up with exit 3, as
 * for a daemon that is not there yet.
 */
export async function whileLoading<T>(ctx: CommandContext, attempt: () => Promise<T>, loading: (t: T) => boolean): Promise<Result<T, number>> {
  const deadline = Date.now() + ctx.timeoutMs;
  let noted = false;
  for (;;) {
    const r = await attempt();
    if (!loading(r)) return ok(r);
    if (Date.now() + LOADING_POLL_MS > deadline) {
      say(ctx, `the daemon at ${describeTarget(ctx.target)} is still loading its config file after ${Math.round(ctx.timeoutMs / 1000)} s; try again later (or pass a longer --timeout)`);
      return err(EXIT.unreachable);
    }
    if (!noted && ctx.io.progress) say(ctx, 'the daemon is loading its config file; waiting');
    noted = true;
    await sleep(LOADING_POLL_MS);
  }
}

function parseJson(body: string): Result<unknown, null> {
  try {
    return ok(JSON.parse(body) as unknown);
  } catch {
    return err(null);
  }
}

/** Reports an unreachable daemon (3) or an error answer (1: its message on stderr, its body on stdout with --json). */
export function failure(ctx: CommandContext, r: Result<ApiResponse, Unreachable>): number {
  if (!r.ok) {
    say(ctx, r.error.message);
    return EXIT.unreachable;
  }
  const { status, body } = r.value;
  if (ctx.json) ctx.io.out(body.endsWith('\n') ? body : `${body}\n`);
  const parsed = parseJson(body);
  const e = parsed.ok ? errorBodySchema.safeParse(parsed.value) : null;
  let message = e?.success === true ? e.data.error.message : `the daemon answered ${status}: ${JSON.stringify(body.slice(0, 200))}`;
  if (status === 401) message += ' (pass --token or set TUNNEL_API_TOKEN)';
  say(ctx, message);
  return EXIT.failed;
}

/** Checks a 2xx body against its schema; a body that does not fit is a clear error (exit 1). */
export function check<S extends z.ZodType>(ctx: CommandContext, what: string, raw: string, schema: S): Result<Answer<z.infer<S>>, number> {
  const parsed = parseJson(raw);
  if (!parsed.ok) {
    say(ctx, `the daemon's answer to ${what} is not JSON: ${JSON.stringify(raw.slice(0, 200))}`);
    return err(EXIT.failed);
  }
  const checked = schema.safeParse(parsed.value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'the body';
    say(ctx, `the daemon's answer to ${what} is not what this tunnel-cli expects (${where}: ${issue?.message ?? 'invalid'}); is the daemon another version?`);
    return err(EXIT.failed);
  }
  return ok({ value: checked.data, raw });
}

/**
 * One request: sent (again while the daemon loads its config file), its failure
 * reported, its answer checked against `schema`. `loading` also counts a 2xx answer
 * as "still loading" (GET /health says so in its body).
 */
export async function ask<S extends z.ZodType>(
  ctx: CommandContext,
  method: 'GET' | 'POST',
  path: string,
  schema: S,
  loading: (v: z.infer<S>) => boolean = () => false,
): Promise<Result<Answer<z.infer<S>>, number>> {
  const what = `${method} ${path}`;
  const sent = await whileLoading(
    ctx,
    async () => {
      const r = await call(ctx.target, method, path);
      if (!r.ok || r.value.status < 200 || r.value.status >= 300) return { r, answer: null };
      return { r, answer: check(ctx, what, r.value.body, schema) };
    },
    ({ r, answer }) => (r.ok && isLoadingAnswer(r.value)) || (answer?.ok === true && loading(answer.value.value)),
  );
  if (!sent.ok) return sent;
  const { r, answer } = sent.value;
  if (answer === null) return err(failure(ctx, r));
  return answer;
}
