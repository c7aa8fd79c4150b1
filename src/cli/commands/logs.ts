import { logsBodySchema, logsListSchema } from '../../api/schemas.js';
import { EXIT, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatLogs, formatLogsList } from '../inspect.js';

/** `logs [hash]`: one tunnel's recent ssh output; without a hash, which tunnels have output. */
export async function logs(ctx: CommandContext, hash: string | null): Promise<number> {
  if (hash === null) {
    const entries = await ask(ctx, 'GET', '/logs', logsListSchema);
    if (!entries.ok) return entries.error;
    print(ctx, entries.value.raw, () => formatLogsList(entries.value.value));
    return EXIT.ok;
  }
  const body = await ask(ctx, 'GET', `/logs/${encodeURIComponent(hash)}`, logsBodySchema);
  if (!body.ok) return body.error;
  print(ctx, body.value.raw, () => formatLogs(body.value.value));
  return EXIT.ok;
}
