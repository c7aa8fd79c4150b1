import { err, ok, type Result } from '../kernel/result.js';

/** The same rule the daemon applies to hash prefixes, checked before any request (exit 2). */
export function validateHashArg(arg: unknown): Result<string, string> {
  const text = String(arg ?? '');
  if (/^[0-9a-fA-F]{4,32}$/.test(text)) return ok(text.toLowerCase());
  return err(`expected a tunnel hash or a prefix of at least 4 hex characters (see tunnel-cli list), found ${JSON.stringify(text.slice(0, 80))}`);
}

/** `--timeout <seconds>`: a positive number. */
export function parseTimeout(arg: unknown): Result<number, string> {
  const n = typeof arg === 'number' ? arg : Number(String(arg));
  if (!Number.isFinite(n) || n <= 0) return err(`--timeout: expected a number of seconds above 0, found ${JSON.stringify(String(arg))}`);
  return ok(n);
}

/**
 * The raw text of `--name value` / `--name=value` (last one wins), because the option
 * parser turns numeric-looking values into numbers (a token "0099" would become 99).
 */
export function rawOption(argv: readonly string[], name: string): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') break;
    if (a === `--${name}`) found = argv[i + 1];
    else if (a.startsWith(`--${name}=`)) found = a.slice(name.length + 3);
  }
  return found;
}

/**
 * A command line with too few or too many positional arguments, said as every usage
 * error is: the command, what it takes, what it was given (cac's own words name neither).
 */
export function positionalError(command: { name: string; rawName: string }, args: readonly string[]): string {
  const expected = command.rawName.slice(command.name.length).trim();
  const given = args.length === 0 ? 'none' : `${args.length}: ${args.map((a) => JSON.stringify(a.slice(0, 80))).join(' ')}`;
  return `${command.name}: expected ${expected === '' ? 'no arguments' : expected}, found ${given}`;
}
