// A throwaway OpenSSH server on loopback, with its own host key, client keys and
// client config. Shared by the test suite, scripts/demo and the benchmarks, so that
// everything that needs "a real server" starts it the same way (see docs/testing.md).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';

export const SSHD_BIN = process.env.SSHD_BIN ?? '/usr/sbin/sshd';

/** Resolves when something accepts TCP connections on host:port, or rejects after `timeoutMs`. */
export async function waitForPort(port, host = '127.0.0.1', timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host });
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** True when host:port can be bound right now. */
export function portIsFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

const usedPorts = new Set();
/**
 * A free TCP port below Linux's ephemeral range (32768–60999), where an outgoing
 * connection could take it for a moment and make a test flaky.
 */
export async function freePort() {
  for (let i = 0; i < 500; i++) {
    const port = 10000 + Math.floor(Math.random() * 22000);
    if (usedPorts.has(port)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port, '::1').catch(() => true))) {
      usedPorts.add(port);
      return port;
    }
  }
  throw new Error('no free port found');
}

function keygen(path) {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path], { stdio: 'ignore' });
}

/**
 * Starts sshd on 127.0.0.1 and returns a handle. The client config at `sshConfigPath`
 * defines the alias `testhost` (authorized key) and `badkey` (a key the server does not
 * accept), both with known_hosts inside the server's folder. Options: `dir`, `port`,
 * `sshdOptions` (lines that come first, so they win), `program` (the path sshd is
 * started by).
 */
export async function startSshd(opts = {}) {
  if (!existsSync(SSHD_BIN)) {
    throw new Error(`${SSHD_BIN} is missing: install openssh-server (apt-get install -y openssh-server)`);
  }
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'tm-sshd-'));
  const port = opts.port ?? (await freePort());
  const user = userInfo().username;
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true });

  const hostKey = join(dir, 'host_key');
  const clientKey = join(dir, 'client_key');
  const otherKey = join(dir, 'other_key');
  if (!existsSync(hostKey)) keygen(hostKey);
  if (!existsSync(clientKey)) keygen(clientKey);
  if (!existsSync(otherKey)) keygen(otherKey);
  copyFileSync(`${clientKey}.pub`, join(dir, 'authorized_keys'));

  // sshd keeps the first value it reads: the caller's options come first, so that they
  // can also override the ones below (AllowTcpForwarding no, GatewayPorts no).
  const extra = opts.sshdOptions ?? [];
  const cfg = join(dir, 'sshd_config');
  writeFileSync(cfg, [
    ...extra,
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${hostKey}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'StrictModes no',
    process.getuid?.() === 0 ? 'UsePAM no' : 'UsePAM yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    'AllowTcpForwarding yes',
    'GatewayPorts clientspecified',
    'PrintMotd no',
    'LogLevel VERBOSE',
    '',
  ].join('\n'));
  // `program`: another path to the sshd binary (a symlink), whose base name sshd uses as its PAM service name.
  const program = opts.program ?? SSHD_BIN;
  execFileSync(program, ['-t', '-f', cfg]);

  const sshConfigPath = join(dir, 'ssh_config');
  const knownHosts = join(dir, 'known_hosts');
  const hostBlock = (alias, key) => [
    `Host ${alias}`,
    '  HostName 127.0.0.1',
    `  Port ${port}`,
    `  User ${user}`,
    `  IdentityFile ${key}`,
    '  IdentitiesOnly yes',
    `  UserKnownHostsFile ${knownHosts}`,
    '',
  ].join('\n');
  writeFileSync(sshConfigPath, hostBlock('testhost', clientKey) + hostBlock('badkey', otherKey), { mode: 0o600 });

  let child;
  const log = [];
  const launch = async () => {
    child = spawn(program, ['-D', '-e', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (d) => { log.push(String(d)); if (log.length > 2000) log.splice(0, 1000); });
    await waitForPort(port);
  };
  await launch();

  const handle = {
    dir, port, user, sshConfigPath, knownHosts, clientKey, otherKey, hostKey,
    alias: 'testhost',
    get pid() { return child.pid; },
    get log() { return log.join(''); },
    /** pids of the per-connection sshd children (the sessions). */
    sessionPids() {
      try {
        return execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
          .split('\n').filter(Boolean).map(Number);
      } catch { return []; }
    },
    /** Every descendant of the listener, for "the whole server went down". */
    allPids() {
      const out = [];
      const walk = (pid) => {
        let kids = [];
        try { kids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number); } catch {}
        for (const k of kids) { out.push(k); walk(k); }
      };
      walk(child.pid);
      return out;
    },
    /** Takes the whole server down: listener and every session child. */
    async kill() {
      const sessions = handle.allPids();
      const exited = child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise((r) => child.once('exit', r));
      try { child.kill('SIGKILL'); } catch {}
      for (const p of sessions) { try { process.kill(p, 'SIGKILL'); } catch {} }
      await exited;
    },
    /** Starts the listener again on the same port with the same keys. */
    async start() { await launch(); },
    async restart() { await handle.kill(); await launch(); },
    async stop() { await handle.kill(); },
  };
  return handle;
}

/** Reads a file if it exists, else ''. */
export function readOr(path) {
  try { return readFileSync(path, 'utf8'); } catch { return ''; }
}
