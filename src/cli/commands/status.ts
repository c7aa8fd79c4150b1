import { healthDetailsSchema, statusListSchema } from '../../api/schemas.js';
import { EXIT, formatOptions, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatConfigProblem, formatExposure, formatStatus } from '../format.js';

/** `status`: every tunnel's state, and above the table the config file's problems and the tunnels' exposure. */
export async function status(ctx: CommandContext): Promise<number> {
  const records = await ask(ctx, 'GET', '/status', statusListSchema);
  if (!records.ok) return records.error;
  if (ctx.json) {
    print(ctx, records.value.raw, () => '');
    return EXIT.ok;
  }
  // The table matters more than the notes above it: a /health/details that fails only loses the notes.
  const health = await ask(ctx, 'GET', '/health/details', healthDetailsSchema, (h) => h.loading);
  if (health.ok && health.value.value.config !== null) {
    ctx.io.out(formatConfigProblem(health.value.value.config, formatOptions(ctx)));
    ctx.io.out(formatExposure(health.value.value.exposure, formatOptions(ctx)));
  }
  ctx.io.out(formatStatus(records.value.value, formatOptions(ctx)));
  return EXIT.ok;
}
