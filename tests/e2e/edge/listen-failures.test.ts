// Every listener of every command that cannot bind: the built command prints one clear
// line and exits 1 (never hangs, never exits 0). The daemon's TCP port and unix socket,
// the panel and `tunnel-manager proxy`; a port in use, a privileged port for a user who
// may not bind it, an address not on this machine, a host name that does not resolve.
import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN } from '../daemon-harness.js';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
let dir: string;
let config: string;
let taken: net.Server;
let takenPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tm-listen-'));
  config = join(dir, 'config.yaml');
  writeFileSync(config, 'tunnels: []\n');
  // Another user runs the EACCES cases: the folder must be theirs to write in.
  if (isRoot) chownSync(dir, NOBODY, NOBODY);
  taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  takenPort = (taken.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => taken.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the built command (as another user when `unprivileged`); its exit code and stderr. */
function run(args: string[], opts: { unprivileged?: boolean; env?: Record<string, string> } = {}): Promise<{ code: number | null; stderr: string }> {
  const argv = [MAIN, ...args];
  // As root every port may be bound: an ordinary user (nobody) shows the EACCES case.
  const [cmd, cmdArgs] = opts.unprivileged && isRoot ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, ...argv]] : [process.execPath, argv];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, cmdArgs, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TUNNEL_API_TOKEN: '', PANEL_TOKEN: '', ...opts.env } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    // A command that hangs instead of exiting is the failure this file guards against.
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** The one non-log line of stderr (log lines are JSON). */
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));

const commands = {
  daemon: (listen: string, sub: string) => ['--config', config, '--listen', listen, '--state-dir', join(dir, `state-${sub}`), '--socket', join(dir, `s-${sub}.sock`)],
  panel: (listen: string) => ['panel', '--config', config, '--listen', listen],
  proxy: (listen: string) => ['proxy', '--config', config, '--listen', listen],
} as const;
const prefix = { daemon: 'tunnel-manager: ', panel: 'tunnel-manager panel: ', proxy: 'tunnel-manager proxy: ' } as const;
// Non-loopback addresses need a token for the daemon and a password for the panel, or they refuse earlier.
const tokens = { TUNNEL_API_TOKEN: 'tok', PANEL_TOKEN: 'pw' };

describe.concurrent.each(['daemon', 'panel', 'proxy'] as const)('tunnel-manager %s cannot listen', (command) => {
  const cases = [
    { what: 'a port in use', listen: () => `127.0.0.1:${takenPort}`, reason: 'the address is already in use' },
    { what: 'a port below 1024 for an ordinary user', listen: () => '127.0.0.1:1', reason: 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)', unprivileged: true },
    { what: 'an IPv4 address not on this machine', listen: () => '192.0.2.1:18080', reason: 'the address is not on this machine', env: tokens },
    { what: 'an IPv6 address not on this machine', listen: () => '[2001:db8::1]:18080', reason: 'the address is not on this machine', env: tokens },
    { what: 'a host name that does not resolve', listen: () => 'no-such-host.invalid:18080', reason: 'the host name does not resolve to an address of this machine', env: tokens },
  ];
  it.each(cases)('$what: one line, exit 1', async (c) => {
    const listen = c.listen();
    const r = await run(commands[command](listen, c.what.replace(/\W+/g, '-')), { unprivileged: c.unprivileged, env: c.env });
    expect(errorLines(r.stderr)).toEqual([`${prefix[command]}cannot listen on ${listen}: ${c.reason}`]);
    expect(r.code).toBe(1);
  });
});

describe.concurrent("the daemon's unix socket cannot be bound", () => {
  it('a folder the user may not write in: one line, exit 1', async () => {
    const rootOwned = join(dir, 'root-owned');
    // Read-only for everyone (root-owned when the test runs as root and the daemon as nobody).
    mkdirSync(rootOwned, { mode: 0o555 });
    if (isRoot) chownSync(rootOwned, 0, 0);
    const socket = join(rootOwned, 'api.sock');
    const r = await run(['--config', config, '--listen', '127.0.0.1:0', '--state-dir', join(dir, 'state-sock'), '--socket', socket], { unprivileged: true });
    expect(errorLines(r.stderr)).toEqual([`tunnel-manager: cannot listen on ${socket}: permission denied`]);
    expect(r.code).toBe(1);
  });

  it('a path longer than a socket address holds: refused before anything is bound', async () => {
    const socket = join(dir, 'x'.repeat(120) + '.sock');
    const r = await run(['--config', config, '--listen', '127.0.0.1:0', '--state-dir', join(dir, 'state-long'), '--socket', socket]);
    expect(errorLines(r.stderr)).toEqual([
      `tunnel-manager: cannot listen on ${socket}: a unix socket path may have at most 107 bytes, this one has ${Buffer.byteLength(socket)}: choose a shorter --socket`,
    ]);
    expect(r.code).toBe(1);
  });
});
