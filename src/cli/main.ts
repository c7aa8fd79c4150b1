#!/usr/bin/env node
/**
 * tunnel-cli: the control client (SPEC §7). Parses the command line, finds the
 * daemon, runs one command and sets the exit code. The only CLI module that touches
 * `process`.
 */
import { cac } from 'cac';
import { defaultSocketPath } from '../settings/default-paths.js';
import { parseTimeout, positionalError, rawOption, validateHashArg } from './args.js';
import type { TerminalIo } from './auth.js';
import { runCommand, type CommandName } from './commands/index.js';
import { EXIT } from './context.js';
import { useColor } from './format.js';
import { HASH_USAGE, readHashArgs } from './hash-args.js';
import { tidyHelp } from './help.js';
import { resolveTarget } from './target.js';
import { packageVersion } from '../kernel/version.js';

const DEFAULT_TIMEOUT_S = 30;

const usageError = (message: string): number => {
  process.stderr.write(`tunnel-cli: ${message}; see tunnel-cli --help\n`);
  return EXIT.usage;
};

async function main(argv: string[]): Promise<number> {
  const cli = cac('tunnel-cli');
  cli
    .option('--socket <path>', 'The daemon\'s unix socket (env TUNNEL_SOCKET; default: the daemon\'s default)')
    .option('--url <url>', 'Talk to the daemon over HTTP instead, e.g. http://127.0.0.1:8080 (env TUNNEL_API_URL)')
    .option('--token <token>', 'Bearer token for --url (env TUNNEL_API_TOKEN)')
    .option('--json', 'Print JSON instead of tables and lines (the daemon\'s answers as it sent them)');

  let chosen: { name: CommandName | 'auth'; hash: string | null; args: string[]; options: Record<string, unknown> } | null = null;
  const command = (name: CommandName | 'auth', usage: string, description: string, withHash: boolean) => {
    const c = cli.command(usage, description);
    if (name === 'start' || name === 'start-tunnel' || name === 'restart' || name === 'restart-tunnel') {
      c.option('--no-wait', 'Return at once instead of waiting until RUNNING')
        .option('--timeout <seconds>', 'How long to wait for RUNNING', { default: DEFAULT_TIMEOUT_S });
    }
    c.action((...args: unknown[]) => {
      const positional = args.slice(0, -1);
      const first = positional[0];
      const hash = withHash && first !== undefined && !Array.isArray(first) ? String(first) : null;
      const rest = positional.flat().map((a) => (a === undefined ? undefined : String(a))).filter((a): a is string => a !== undefined);
      chosen = { name, hash, args: rest, options: args[args.length - 1] as Record<string, unknown> };
    });
    return c;
  };
  command('list', 'list', 'Tunnels in the config in force, as written', false);
  command('status', 'status', 'State of every tunnel (and the config file\'s problems)', false);
  command('start', 'start', 'Start every tunnel and wait until they are RUNNING', false);
  command('stop', 'stop', 'Stop every tunnel (they stay stopped until started)', false);
  command('start-tunnel', 'start-tunnel <hash>', 'Start one tunnel (hash or unique prefix of 4+) and wait until RUNNING', true)
    .example('  $ tunnel-cli start-tunnel 1a2b3c4d');
  command('stop-tunnel', 'stop-tunnel <hash>', 'Stop one tunnel (it stays stopped until started)', true)
    .example('  $ tunnel-cli stop-tunnel 1a2b');
  command('restart', 'restart', 'Stop every tunnel, then start them and wait until they are RUNNING', false);
  command('restart-tunnel', 'restart-tunnel <hash>', 'Stop one tunnel, then start it and wait until RUNNING', true);
  command('show-tunnel', 'show-tunnel <hash>', 'One tunnel as written in the config file, with its state', true);
  command('logs', 'logs [hash]', 'Recent ssh output of one tunnel; without a hash, which tunnels have output', true);
  command('reload', 'reload', 'Read the config file now and apply it', false);
  command('validate', 'validate', 'Whether the daemon finds the config file valid; its problems (exit 1) if not', false);
  command('hash', `hash ${HASH_USAGE}`, 'A tunnel\'s hash, computed here without the daemon (each argument checked as its field in the config file)', false)
    .example('  $ tunnel-cli hash db user@bastion 5432 127.0.0.1:15432')
    .example('  $ tunnel-cli hash proxy user@bastion "" 1080 socks    # SOCKS: no remote_port');
  command('auth', 'auth <hash>', 'Log in to an interactive tunnel (password, one-time code) from this terminal; Ctrl-C detaches', true)
    .example('  $ tunnel-cli auth 1a2b3c4d');
  cli.help((sections) => {
    const shown = cli.matchedCommand;
    return [
      ...tidyHelp(sections, 'tunnel-cli', cli.commands, shown).map((s) => ({
        ...s,
        body: s.body
          .split('\n')
          // cac shows a negated flag's default ("--no-wait … (default: true)"); auth prints a terminal, never JSON.
          .filter((l) => !(shown?.name === 'auth' && /^ {2}--json\b/.test(l)))
          .map((l) => l.replace(/ \(default: true\)$/, ''))
          .join('\n'),
      })),
      { title: 'Exit codes', body: '  0 done, 1 failed (a tunnel FAILED, daemon error), 2 usage, 3 daemon not reachable' },
    ];
  });
  cli.version(packageVersion());

  try {
    const parsed = cli.parse(argv, { run: false });
    if (parsed.options.help || (parsed.options.version && !cli.matchedCommandName)) return EXIT.ok;
    if (!cli.matchedCommand) {
      const first = parsed.args[0];
      if (first === undefined) {
        cli.outputHelp();
        return EXIT.usage;
      }
      return usageError(`unknown command ${JSON.stringify(String(first))}`);
    }
    await cli.runMatchedCommand();
  } catch (e) {
    if (e instanceof Error && e.name === 'CACError') {
      // Too few or too many arguments: hash names the one missing; every command says what it takes.
      const c = cli.matchedCommand;
      if (c !== undefined && /^(missing required args|Unused args)/.test(e.message)) {
        const given = cli.args.map(String);
        const read = c.name === 'hash' ? readHashArgs(given) : null;
        return usageError(read !== null && !read.ok ? `hash: ${read.error}` : positionalError(c, given));
      }
      return usageError(e.message);
    }
    throw e;
  }
  const run = chosen as { name: CommandName | 'auth'; hash: string | null; args: string[]; options: Record<string, unknown> } | null;
  if (run === null) return usageError('no command');

  let hash: string | null = null;
  if (run.hash !== null) {
    const valid = validateHashArg(run.hash);
    if (!valid.ok) return usageError(valid.error);
    hash = valid.value;
  }
  const timeout = parseTimeout(run.options.timeout ?? DEFAULT_TIMEOUT_S);
  if (!timeout.ok) return usageError(timeout.error);

  const args = argv.slice(2);
  const target = resolveTarget(
    { socket: rawOption(args, 'socket'), url: rawOption(args, 'url'), token: rawOption(args, 'token') },
    process.env,
    defaultSocketPath(process.env, process.getuid?.() ?? 0),
  );
  if (!target.ok) return usageError(target.error);

  // The WebSocket client is loaded only by the commands that open a terminal: every other command starts faster.
  if (run.name === 'auth') return (await import('./auth.js')).runAuth(hash ?? '', target.value, terminalIo());
  return runCommand(run.name, hash, {
    target: target.value,
    json: run.options.json === true,
    wait: run.options.wait !== false,
    timeoutMs: timeout.value * 1000,
    io: {
      out: (t) => process.stdout.write(t),
      err: (t) => process.stderr.write(t),
      color: useColor(process.stdout.isTTY === true, process.env),
      progress: process.stderr.isTTY === true,
      columns: process.stderr.columns || undefined,
      now: () => new Date(),
    },
  }, run.args);
}

function terminalIo(): TerminalIo {
  const stdin = process.stdin;
  return {
    input: stdin,
    output: (data) => process.stdout.write(data),
    say: (text) => process.stderr.write(text),
    setRaw(raw) {
      if (!stdin.isTTY) return false;
      stdin.setRawMode(raw);
      return raw;
    },
    size: () => (process.stdout.isTTY ? { cols: process.stdout.columns, rows: process.stdout.rows } : null),
    onResize(listener) {
      process.stdout.on('resize', listener);
      return () => process.stdout.off('resize', listener);
    },
  };
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`tunnel-cli: unexpected error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = EXIT.failed;
  },
);
