import type { Target } from './target.js';
import type { FormatOptions } from './format.js';

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

/** Everything a command runs with: where the daemon is, the options, the streams. */
export interface CommandContext {
  target: Target;
  json: boolean;
  wait: boolean;
  /** How long to wait: for RUNNING after a start, and for a daemon still loading its config file. */
  timeoutMs: number;
  io: Io;
}

export const formatOptions = (ctx: CommandContext): FormatOptions => ({ color: ctx.io.color, now: ctx.io.now() });

/** One line on stderr, as every error and note of tunnel-cli is. */
export const say = (ctx: CommandContext, text: string): void => ctx.io.err(`tunnel-cli: ${text}\n`);

/** The daemon's body as it came with --json; else the human form. */
export function print(ctx: CommandContext, raw: string, human: () => string): void {
  ctx.io.out(ctx.json ? (raw.endsWith('\n') ? raw : `${raw}\n`) : human());
}
