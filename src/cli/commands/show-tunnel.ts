import { referenceTunnelSchema, statusListSchema } from '../../api/schemas.js';
import { EXIT, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatTunnel } from '../inspect.js';

/** `show-tunnel <hash>`: the entry as written in the file and, when it runs, its state (--json: both). */
export async function showTunnel(ctx: CommandContext, hash: string): Promise<number> {
  const tunnel = await ask(ctx, 'GET', `/config/${encodeURIComponent(hash)}`, referenceTunnelSchema);
  if (!tunnel.ok) return tunnel.error;
  const statuses = await ask(ctx, 'GET', '/status', statusListSchema);
  if (!statuses.ok) return statuses.error;
  const t = tunnel.value.value;
  const record = statuses.value.value.find((r) => r.hash === t.hash) ?? null;
  print(ctx, JSON.stringify({ tunnel: t, status: record }), () => formatTunnel(t, record));
  return EXIT.ok;
}
