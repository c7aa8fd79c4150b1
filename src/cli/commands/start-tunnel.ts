import type { CommandContext } from '../context.js';
import { startAndWait } from '../start-wait.js';

/** `start-tunnel <hash>`: one tunnel, then (unless --no-wait) wait until it is RUNNING. */
export function startTunnel(ctx: CommandContext, hash: string): Promise<number> {
  return startAndWait(ctx, { kind: 'one', hash });
}
