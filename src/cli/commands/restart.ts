import { statusListSchema } from '../../api/schemas.js';
import type { CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { startAndWait } from '../start-wait.js';

/** `restart`: stop every tunnel, then start them and wait as `start` does (the wait sees only the new start's events). */
export async function restart(ctx: CommandContext): Promise<number> {
  const stopped = await ask(ctx, 'POST', '/stop', statusListSchema);
  if (!stopped.ok) return stopped.error;
  return startAndWait(ctx, { kind: 'all' });
}
