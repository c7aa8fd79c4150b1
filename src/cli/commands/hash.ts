import { EXIT, print, say, type CommandContext } from '../context.js';
import { hashOf } from '../hash-args.js';

/** `hash <name> <remote_host> <remote_port> <local_port> [direction] [interactive]`: computed here, without the daemon. */
export function hash(ctx: CommandContext, args: readonly string[]): number {
  const r = hashOf(args);
  if (!r.ok) {
    say(ctx, `hash: ${r.error}`);
    return EXIT.usage;
  }
  print(ctx, JSON.stringify({ hash: r.value }), () => `${r.value}\n`);
  return EXIT.ok;
}
