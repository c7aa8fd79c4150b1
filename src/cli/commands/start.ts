import type { CommandContext } from '../context.js';
import { startAndWait } from '../start-wait.js';

/** `start`: every tunnel but the interactive ones, then (unless --no-wait) wait until they are RUNNING. */
export function start(ctx: CommandContext): Promise<number> {
  return startAndWait(ctx, { kind: 'all' });
}
