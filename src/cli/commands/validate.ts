import { healthDetailsSchema } from '../../api/schemas.js';
import { EXIT, formatOptions, print, say, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatExposure } from '../format.js';
import { formatValidation } from '../inspect.js';

/** `validate`: the daemon's verdict on the config file (exit 1 with its problems), and the tunnels' exposure (told, not a failure). */
export async function validate(ctx: CommandContext): Promise<number> {
  // /health/details answers while the file is loading, and says so: wait for the verdict.
  const health = await ask(ctx, 'GET', '/health/details', healthDetailsSchema, (h) => h.loading);
  if (!health.ok) return health.error;
  const config = health.value.value.config;
  if (config === null) {
    say(ctx, "the daemon's answer to GET /health/details has no config state although it is not loading");
    return EXIT.failed;
  }
  const v = formatValidation(config);
  print(ctx, JSON.stringify(config), () => v.text + formatExposure(health.value.value.exposure, formatOptions(ctx)));
  return v.valid ? EXIT.ok : EXIT.failed;
}
