import { statusRecordSchema } from '../../api/schemas.js';
import type { CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { startAndWait } from '../start-wait.js';

/** `restart-tunnel <hash>`: stop one tunnel, then start it and wait as `start-tunnel` does. */
export async function restartTunnel(ctx: CommandContext, hash: string): Promise<number> {
  const stopped = await ask(ctx, 'POST', `/stop/${encodeURIComponent(hash)}`, statusRecordSchema);
  if (!stopped.ok) return stopped.error;
  return startAndWait(ctx, { kind: 'one', hash });
}
