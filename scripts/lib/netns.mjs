// A private network namespace joined to this one by a veth pair, and an sshd inside
// it, so that a test can blackhole the server (iptables DROP inside the namespace)
// without touching the machine's own network. Needs root, iproute2 and iptables
// (docs/testing.md). Every name carries this process's pid, so leftovers of a crashed run
// are recognised and removed by the next one.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';

const PREFIX = 'tmrel';

function run(cmd, args) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryRun(cmd, args) {
  try {
    return run(cmd, args);
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Deletes namespaces (and their veth pairs) left by runs whose process is gone. */
export function removeStaleNamespaces() {
  const names = (tryRun('ip', ['netns', 'list']) ?? '').split('\n').map((l) => l.split(' ')[0]).filter(Boolean);
  for (const name of names) {
    const m = new RegExp(`^${PREFIX}(\\d+)x\\d+$`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    killNamespaceProcesses(name);
    tryRun('ip', ['netns', 'del', name]);
  }
}

function killNamespaceProcesses(ns) {
  const pids = (tryRun('ip', ['netns', 'pids', ns]) ?? '').split('\n').filter(Boolean).map(Number);
  for (const pid of pids) {
    try { process.kill(pid, 'SIGCONT'); process.kill(pid, 'SIGKILL'); } catch {}
  }
}

/** A /30 in 10.213.0.0/16 that no interface of this namespace uses yet. */
function pickSubnet() {
  const used = tryRun('ip', ['-o', '-4', 'addr', 'show']) ?? '';
  for (let i = 0; i < 200; i++) {
    const third = Math.floor(Math.random() * 256);
    const fourth = Math.floor(Math.random() * 64) * 4;
    const host = `10.213.${third}.${fourth + 1}`;
    const peer = `10.213.${third}.${fourth + 2}`;
    if (!used.includes(` ${host}/`) && !used.includes(` ${peer}/`)) return { host, peer };
  }
  throw new Error('no free 10.213.x.y/30 found');
}

let counter = 0;

/**
 * Creates namespace `ns` with a veth pair: `hostAddr` on this side, `nsAddr` inside.
 * Throws with the failing command's message when the machine cannot do it: a test
 * that needs a namespace must fail, not skip.
 */
export function createNetns() {
  removeStaleNamespaces();
  const ns = `${PREFIX}${process.pid}x${counter++}`;
  // Interface names are at most 15 characters.
  const tag = `${process.pid % 100000}${counter}`;
  const hostIf = `tmh${tag}`.slice(0, 15);
  const nsIf = `tmn${tag}`.slice(0, 15);
  const { host: hostAddr, peer: nsAddr } = pickSubnet();
  const steps = [
    ['ip', ['netns', 'add', ns]],
    ['ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf]],
    ['ip', ['link', 'set', nsIf, 'netns', ns]],
    ['ip', ['addr', 'add', `${hostAddr}/30`, 'dev', hostIf]],
    ['ip', ['link', 'set', hostIf, 'up']],
    ['ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `${nsAddr}/30`, 'dev', nsIf]],
    ['ip', ['netns', 'exec', ns, 'ip', 'link', 'set', nsIf, 'up']],
    ['ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']],
  ];
  const handle = {
    ns, hostIf, nsIf, hostAddr, nsAddr,
    /** Runs a command inside the namespace and returns its stdout. */
    exec(cmd, args) {
      return run('ip', ['netns', 'exec', ns, cmd, ...args]);
    },
    /** Blackholes every packet that arrives in the namespace. */
    drop() {
      handle.exec('iptables', ['-w', '-I', 'INPUT', '1', '-j', 'DROP']);
    },
    /** Removes the rule drop() added. */
    undrop() {
      handle.exec('iptables', ['-w', '-D', 'INPUT', '-j', 'DROP']);
    },
    /** Ends every process in the namespace and deletes it (the veth pair goes with it). Idempotent. */
    destroy() {
      killNamespaceProcesses(ns);
      tryRun('ip', ['netns', 'del', ns]);
      tryRun('ip', ['link', 'del', hostIf]);
    },
  };
  try {
    for (const [cmd, args] of steps) run(cmd, args);
  } catch (e) {
    handle.destroy();
    const detail = e.stderr ? String(e.stderr).trim() : e.message;
    throw new Error(`cannot create network namespace ${ns}: ${detail}`, { cause: e });
  }
  return handle;
}

function keygen(path) {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path], { stdio: 'ignore' });
}

async function waitForPort(port, host, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host });
      const t = setTimeout(() => { s.destroy(); resolve(false); }, 500);
      s.once('connect', () => { clearTimeout(t); s.destroy(); resolve(true); });
      s.once('error', () => { clearTimeout(t); resolve(false); });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts sshd inside the namespace, listening on its veth address. The client config
 * at `sshConfigPath` defines the alias `nshost`; `opts.sshdOptions` are extra
 * sshd_config lines.
 */
export async function startNetnsSshd(netns, opts = {}) {
  const sshdBin = process.env.SSHD_BIN ?? '/usr/sbin/sshd';
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'tm-nssshd-'));
  const port = opts.port ?? 2222;
  const user = userInfo().username;
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true });
  const hostKey = join(dir, 'host_key');
  const clientKey = join(dir, 'client_key');
  if (!existsSync(hostKey)) keygen(hostKey);
  if (!existsSync(clientKey)) keygen(clientKey);
  copyFileSync(`${clientKey}.pub`, join(dir, 'authorized_keys'));
  const cfg = join(dir, 'sshd_config');
  writeFileSync(cfg, [
    `Port ${port}`,
    `ListenAddress ${netns.nsAddr}`,
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
    ...(opts.sshdOptions ?? []),
    '',
  ].join('\n'));
  execFileSync(sshdBin, ['-t', '-f', cfg]);
  const sshConfigPath = join(dir, 'ssh_config');
  writeFileSync(sshConfigPath, [
    'Host nshost',
    `  HostName ${netns.nsAddr}`,
    `  Port ${port}`,
    `  User ${user}`,
    `  IdentityFile ${clientKey}`,
    '  IdentitiesOnly yes',
    `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
    '',
  ].join('\n'), { mode: 0o600 });

  const log = [];
  const child = spawn('ip', ['netns', 'exec', netns.ns, sshdBin, '-D', '-e', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (d) => { log.push(String(d)); if (log.length > 2000) log.splice(0, 1000); });
  const exited = new Promise((r) => child.once('exit', r));
  await waitForPort(port, netns.nsAddr);
  return {
    dir, port, sshConfigPath, alias: 'nshost', host: netns.nsAddr,
    get pid() { return child.pid; },
    get log() { return log.join(''); },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
