import { statusListSchema } from '../../api/schemas.js';
import { EXIT, formatOptions, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatStatus } from '../format.js';

/** `stop`: every tunnel stopped (they stay stopped until started). */
export async function stop(ctx: CommandContext): Promise<number> {
  const answer = await ask(ctx, 'POST', '/stop', statusListSchema);
  if (!answer.ok) return answer.error;
  print(ctx, answer.value.raw, () => formatStatus(answer.value.value, formatOptions(ctx)));
  return EXIT.ok;
}
