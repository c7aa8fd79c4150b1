import { reloadRecordSchema } from '../../api/schemas.js';
import { EXIT, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatReload } from '../format.js';

/** `reload`: read the config file now and apply it. */
export async function reload(ctx: CommandContext): Promise<number> {
  const record = await ask(ctx, 'POST', '/reload', reloadRecordSchema);
  if (!record.ok) return record.error;
  print(ctx, record.value.raw, () => formatReload(record.value.value));
  // Entries left out are a config the user has to fix, even though the rest was applied.
  return record.value.value.left_out > 0 ? EXIT.failed : EXIT.ok;
}
