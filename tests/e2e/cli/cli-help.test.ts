// Both built bins' --help, and each command's: every command named, each command's own
// help saying what it does, no padding left at the ends of lines, and the /v1 group
// called what it is (a model proxy for OpenAI and Anthropic clients, not a chat proxy).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, MAIN } from '../daemon-harness.js';

type Ran = { code: number | null; stdout: string; stderr: string };

// Help texts do not change between calls: each bin and arguments runs once, and the
// tests that read the same text share it (each run is a node start, about 0.4 s).
const ran = new Map<string, Promise<Ran>>();
function run(bin: string, args: string[]): Promise<Ran> {
  const key = JSON.stringify([bin, ...args]);
  let r = ran.get(key);
  if (r === undefined) {
    r = runOnce(bin, args);
    ran.set(key, r);
  }
  return r;
}

function runOnce(bin: string, args: string[]): Promise<Ran> {
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (e, stdout, stderr) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr });
    });
  });
}

/** The `Commands:` section of a help text: each command's usage and description. */
function commandsOf(help: string): { usage: string; description: string }[] {
  const section = /\nCommands:\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? '';
  const out: { usage: string; description: string }[] = [];
  for (const line of section.split('\n')) {
    const m = /^ {2}(\S.*?)(?: {2,}(\S.*))?$/.exec(line);
    if (m) out.push({ usage: m[1] ?? '', description: m[2] ?? '' });
    else if (/^ {3,}\S/.test(line) && out.length > 0) (out[out.length - 1] as { description: string }).description = line.trim();
    else out.push({ usage: '', description: line.trim() });
  }
  return out;
}

const BINS = [
  { bin: 'tunnel-manager', path: MAIN, commands: ['serve', 'check', 'migrate', 'panel', 'proxy'] },
  {
    bin: 'tunnel-cli',
    path: CLI,
    commands: ['list', 'status', 'start', 'stop', 'start-tunnel', 'stop-tunnel', 'restart', 'restart-tunnel', 'show-tunnel', 'logs', 'reload', 'validate', 'hash', 'auth'],
  },
];

beforeAll(async () => {
  for (const b of BINS) if (!existsSync(b.path)) throw new Error(`${b.path} is missing: run npm run build first`);
  // Every help text at once, a few at a time, rather than one after another in the tests.
  const all = BINS.flatMap((b) => [[b.path, '--help'], ...b.commands.map((c) => [b.path, c, '--help'])]);
  for (let i = 0; i < all.length; i += 4) await Promise.all(all.slice(i, i + 4).map(([bin, ...args]) => run(bin!, args)));
});

describe.each(BINS)('$bin --help', ({ bin, path, commands }) => {
  it('names every command, each with a description, on a usage line that says how to call it', async () => {
    const r = await run(path, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`\\nUsage:\\n {2}\\$ ${bin} (\\[command\\]|<command>) \\[options\\]\\n`));
    const listed = commandsOf(r.stdout);
    expect(listed.map((c) => c.usage.split(' ')[0])).toEqual(commands);
    for (const c of listed) expect(c.description, c.usage).toMatch(/\w/);
    expect(r.stdout).not.toMatch(/\$ \S+ --help/);
    for (const c of commands) expect(r.stdout).toContain(`  $ ${bin} ${c} --help\n`);
  });

  it.each(commands)("%s --help says what the command does", async (command) => {
    const top = commandsOf((await run(path, ['--help'])).stdout).find((c) => c.usage.split(' ')[0] === command);
    const r = await run(path, [command, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`\\nUsage:\\n {2}\\$ ${bin} ${command}( |\\n)`));
    expect(r.stdout).toContain(`\n\n  ${top?.description ?? '(not listed)'}\n\n`);
  });

  it('no line ends in white space, and nothing calls /v1 a chat proxy', async () => {
    for (const args of [['--help'], ...commands.map((c) => [c, '--help'])]) {
      const { stdout } = await run(path, args);
      stdout.split('\n').forEach((line, i) => expect(line, `${args.join(' ')}, line ${i + 1}: ${JSON.stringify(line)}`).toBe(line.trimEnd()));
      expect(stdout, args.join(' ')).not.toMatch(/chat[- ](completion )?proxy/i);
    }
  });
});

describe('what the help says', () => {
  it('tunnel-manager: no command runs the daemon; /v1 is the model proxy for OpenAI and Anthropic clients', async () => {
    const help = (await run(MAIN, ['--help'])).stdout;
    expect(help).toMatch(/\n {2}serve +run the daemon \(also without a command\): .*\/v1 model proxy for OpenAI and Anthropic clients\n/);
    expect(help).toMatch(/\n {2}proxy +run the \/v1 model proxy \(OpenAI and Anthropic formats\) alone/);
  });

  it('tunnel-cli auth --help offers no --json (it prints a terminal); hash --help shows a SOCKS tunnel', async () => {
    expect((await run(CLI, ['auth', '--help'])).stdout).not.toContain('--json');
    expect((await run(CLI, ['status', '--help'])).stdout).toContain('--json');
    expect((await run(CLI, ['hash', '--help'])).stdout).toContain('$ tunnel-cli hash proxy user@bastion "" 1080 socks');
  });
});

describe('a command line with too few or too many arguments says what the command takes and what it was given', () => {
  it.each([
    [['list', 'extra'], 'list: expected no arguments, found 1: "extra"'],
    [['start-tunnel', 'abcd', 'efgh'], 'start-tunnel: expected <hash>, found 2: "abcd" "efgh"'],
    [['start-tunnel'], 'start-tunnel: expected <hash>, found none'],
    [['logs', 'abcd', 'efgh'], 'logs: expected [hash], found 2: "abcd" "efgh"'],
    [['hash', 'db', 'bastion', '5432'], 'hash: expected <name> <remote_host> <remote_port> <local_port> [direction] [interactive], found 3 arguments: no local_port'],
    [['hash', 'db', 'bastion', '5432', '15432', 'remote_to_local', 'false', 'more'], 'hash: expected <name> <remote_host> <remote_port> <local_port> [direction] [interactive], found 7 arguments: "more" after interactive'],
  ])('tunnel-cli %j', async (args, message) => {
    const r = await run(CLI, args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tunnel-cli: ${message}; see tunnel-cli --help\n`);
  });
});
