/** tunnel-cli's commands (one per file), by name; each resolves with its exit code. */
import type { CommandContext } from '../context.js';
import { hash } from './hash.js';
import { list } from './list.js';
import { logs } from './logs.js';
import { reload } from './reload.js';
import { restart } from './restart.js';
import { restartTunnel } from './restart-tunnel.js';
import { showTunnel } from './show-tunnel.js';
import { start } from './start.js';
import { startTunnel } from './start-tunnel.js';
import { status } from './status.js';
import { stop } from './stop.js';
import { stopTunnel } from './stop-tunnel.js';
import { validate } from './validate.js';

/** What a command gets: `hash` already checked (null when it takes none or none was given), `args` its positional arguments. */
type Run = (ctx: CommandContext, hash: string | null, args: readonly string[]) => Promise<number> | number;

// A command whose usage has a required <hash> always gets one: cac refuses the line without it.
export const COMMANDS = {
  list: (ctx) => list(ctx),
  status: (ctx) => status(ctx),
  start: (ctx) => start(ctx),
  stop: (ctx) => stop(ctx),
  restart: (ctx) => restart(ctx),
  'start-tunnel': (ctx, h) => startTunnel(ctx, h ?? ''),
  'stop-tunnel': (ctx, h) => stopTunnel(ctx, h ?? ''),
  'restart-tunnel': (ctx, h) => restartTunnel(ctx, h ?? ''),
  'show-tunnel': (ctx, h) => showTunnel(ctx, h ?? ''),
  logs: (ctx, h) => logs(ctx, h),
  reload: (ctx) => reload(ctx),
  validate: (ctx) => validate(ctx),
  hash: (ctx, _h, args) => hash(ctx, args),
} satisfies Record<string, Run>;

export type CommandName = keyof typeof COMMANDS;

/** Runs one command; `hash` is already validated; `args` are the positional arguments (of `hash`). */
export async function runCommand(name: CommandName, hash: string | null, ctx: CommandContext, args: readonly string[] = []): Promise<number> {
  const run: Run = COMMANDS[name];
  return run(ctx, hash, args);
}
