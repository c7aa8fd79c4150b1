import { listSchema } from '../../api/schemas.js';
import { EXIT, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatList } from '../format.js';

/** `list`: the tunnels of the config in force, as written. */
export async function list(ctx: CommandContext): Promise<number> {
  const answer = await ask(ctx, 'GET', '/list', listSchema);
  if (!answer.ok) return answer.error;
  print(ctx, answer.value.raw, () => formatList(answer.value.value));
  return EXIT.ok;
}
