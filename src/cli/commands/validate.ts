import { healthBodySchema } from '../../api/schemas.js';
import { EXIT, print, say, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatValidation } from '../inspect.js';

/** `validate`: the daemon's verdict on the config file (exit 1 with its problems). */
export async function validate(ctx: CommandContext): Promise<number> {
  // /health answers while the file is loading, and says so: wait for the verdict.
  const health = await ask(ctx, 'GET', '/health', healthBodySchema, (h) => h.loading);
  if (!health.ok) return health.error;
  const config = health.value.value.config;
  if (config === null) {
    say(ctx, "the daemon's answer to GET /health has no config state although it is not loading");
    return EXIT.failed;
  }
  const v = formatValidation(config);
  print(ctx, JSON.stringify(config), () => v.text);
  return v.valid ? EXIT.ok : EXIT.failed;
}
