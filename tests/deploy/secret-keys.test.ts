// SSH keys mounted from a Kubernetes Secret, laid out on disk as the kubelet lays them
// out (each file a link into `..data`, a link to a timestamped folder), owned and
// moded as defaultMode and fsGroup make them, and used by uid 1500 — a non-root user
// as in the manifests. For each layout the real ssh client's verdict is taken first,
// then `tunnel-manager check`, the container's entrypoint and the daemon must agree
// with it: what ssh accepts runs (the daemon's tunnel carries data), what it refuses
// stops with the fix that works there (the manifest, not a chmod on a read-only mount).
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { MAIN, REPO, echoServer, port, roundTrip, sshd, type Sshd } from '../e2e/daemon-harness.js';

const USER = 1500;
/** The pod's fsGroup: a supplementary group of the daemon's user. */
const FS_GROUP = 2000;

let server: Sshd;
let root: string;
let passwd: string;
let group: string;
let echoPort: number;
let echo: { close(): Promise<void> };

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
  root = mkdtempSync(join(tmpdir(), 'tm-secret-keys-'));
  chmodSync(root, 0o755);
  // ssh needs an account for its uid: a private /etc/passwd and /etc/group, bound in a mount namespace.
  const home = join(root, 'home');
  mkdirSync(home);
  chownSync(home, USER, USER);
  passwd = join(root, 'passwd');
  group = join(root, 'group');
  writeFileSync(passwd, `${readFileSync('/etc/passwd', 'utf8')}tunnel:x:${USER}:${USER}::${home}:/bin/sh\n`);
  writeFileSync(group, `${readFileSync('/etc/group', 'utf8')}tunnel:x:${USER}:\npod:x:${FS_GROUP}:\n`);
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'tunnel-manager'), '#!/bin/sh\necho "started as $(id -u)"\n', { mode: 0o755 });
});

afterAll(async () => {
  await echo?.close();
  await server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Runs `args` as uid 1500 (groups 1500 and the fsGroup), with the private account files. */
function asUser(args: string[], env: Record<string, string> = {}) {
  return execa(
    'unshare',
    ['-m', 'sh', '-c', 'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec setpriv --reuid "$U" --regid "$U" --groups "$G" -- "$@"', 'sh', passwd, group, ...args],
    { env: { PATH: process.env.PATH!, U: String(USER), G: String(FS_GROUP), ...env }, extendEnv: false, reject: false },
  );
}

interface KeyLayout {
  owner: number;
  group: number;
  mode: number;
  /** Mounted as the kubelet mounts a Secret (links into ..data), or a plain folder. */
  kubelet: boolean;
}

/** An SSH directory with config, key and known_hosts for the test server, as a Secret volume or a plain folder. */
function sshDir(name: string, key: KeyLayout): string {
  const dir = join(root, name);
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  const files: Record<string, string> = {
    config: `Host testhost\n  HostName 127.0.0.1\n  Port ${server.port}\n  User ${server.user}\n  IdentityFile ${dir}/id_ed25519\n  IdentitiesOnly yes\n  UserKnownHostsFile ${dir}/known_hosts\n  StrictHostKeyChecking yes\n`,
    id_ed25519: readFileSync(server.clientKey, 'utf8'),
    known_hosts: `[127.0.0.1]:${server.port} ${readFileSync(`${server.hostKey}.pub`, 'utf8')}`,
  };
  const data = key.kubelet ? join(dir, '..2026_11_27_10_00_00.123456789') : dir;
  if (key.kubelet) mkdirSync(data, { mode: 0o755 });
  for (const [file, text] of Object.entries(files)) {
    const path = join(data, file);
    writeFileSync(path, text);
    // The kubelet: root-owned files with defaultMode, the group set by fsGroup; the key as the case says.
    const [owner, grp, mode] = file === 'id_ed25519' ? [key.owner, key.group, key.mode] : [0, FS_GROUP, 0o440];
    chownSync(path, owner, grp);
    chmodSync(path, mode);
  }
  if (key.kubelet) {
    symlinkSync('..2026_11_27_10_00_00.123456789', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    for (const file of Object.keys(files)) symlinkSync(`..data/${file}`, join(dir, file));
  }
  return dir;
}

/** A config with one tunnel through the test server, a state dir and a socket folder of uid 1500. */
function daemonFiles(name: string, localPort: number): { config: string; state: string; socket: string } {
  const dir = join(root, `${name}-daemon`);
  mkdirSync(join(dir, 'run'), { recursive: true });
  chmodSync(dir, 0o755);
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `tunnels:\n  - name: db\n    remote_host: testhost\n    remote_port: ${echoPort}\n    local_port: "127.0.0.1:${localPort}"\n    direction: remote_to_local\n`);
  mkdirSync(join(dir, 'state'));
  chownSync(join(dir, 'run'), USER, USER);
  chownSync(join(dir, 'state'), USER, USER);
  return { config, state: join(dir, 'state'), socket: join(dir, 'run', 'api.sock') };
}

type Verdict = 'accepted' | 'refused' | 'unreadable';

const CASES: { name: string; key: KeyLayout; ssh: Verdict }[] = [
  { name: 'a Secret without defaultMode: root-owned 0644', key: { owner: 0, group: 0, mode: 0o644, kubelet: true }, ssh: 'accepted' },
  { name: 'defaultMode 0440 with fsGroup: root:fsGroup 0440', key: { owner: 0, group: FS_GROUP, mode: 0o440, kubelet: true }, ssh: 'accepted' },
  { name: "the user's own key, 0400", key: { owner: USER, group: USER, mode: 0o400, kubelet: true }, ssh: 'accepted' },
  { name: "the user's own key, 0644", key: { owner: USER, group: USER, mode: 0o644, kubelet: true }, ssh: 'refused' },
  { name: "the user's own key, 0640 with fsGroup", key: { owner: USER, group: FS_GROUP, mode: 0o640, kubelet: true }, ssh: 'refused' },
  { name: 'defaultMode 0400 without fsGroup: root-owned 0400', key: { owner: 0, group: 0, mode: 0o400, kubelet: true }, ssh: 'unreadable' },
  { name: "the user's own key, 0644, in a plain folder", key: { owner: USER, group: USER, mode: 0o644, kubelet: false }, ssh: 'refused' },
];

describe('Secret-mounted keys, judged as ssh judges them, for uid 1500', () => {
  // Independent folders and ports: the cases run side by side (most of their time is waiting for processes).
  it.concurrent.for(CASES.map((c, i) => ({ ...c, i })))('$name: ssh says $ssh, and check, the entrypoint and the daemon agree', async ({ key, ssh, i }, { expect }) => {
    const dir = sshDir(`case${i}`, key);

    // The real ssh client first: the verdict everything else must match.
    const real = await asUser(['ssh', '-F', join(dir, 'config'), '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=30', 'testhost', 'true']);
    if (ssh === 'accepted') expect(real.exitCode, real.stderr).toBe(0);
    if (ssh === 'refused') expect(real.stderr).toMatch(/UNPROTECTED PRIVATE KEY FILE/);
    if (ssh === 'unreadable') expect(real.stderr).toMatch(/Load key .*: Permission denied/);
    if (ssh !== 'accepted') expect(real.exitCode).toBe(255);

    const localPort = await port();
    const files = daemonFiles(`case${i}`, localPort);
    const manifestFix = key.owner === USER
      ? `in the manifest, set defaultMode: 0400 on the Secret volume and no fsGroup (fsGroup adds group read), or run as a uid other than ${USER} (runAsUser) with fsGroup`
      : `in the manifest, set fsGroup to a group of uid ${USER}`;

    // tunnel-manager check, as uid 1500.
    const check = await asUser([process.execPath, MAIN, 'check', '--config', files.config, '--ssh-config', join(dir, 'config'), '--state-dir', files.state]);
    if (ssh === 'accepted') {
      expect(check.exitCode, check.stdout + check.stderr).toBe(0);
      // Nothing to tighten in a Kubernetes volume: it is as the manifest made it.
      if (key.kubelet) expect(check.stdout).not.toMatch(/warning/);
    } else {
      expect(check.exitCode).toBe(1);
      expect(check.stdout).toContain(key.kubelet ? manifestFix : `fix: chmod 600 ${dir}/id_ed25519`);
      if (key.kubelet) expect(check.stdout).not.toMatch(/fix: (chmod|sudo)/);
    }

    // The entrypoint, started as uid 1500 as runAsUser starts it (a stub daemon on PATH).
    const entry = await asUser(['sh', join(REPO, 'docker/entrypoint.sh')], {
      PATH: `${join(root, 'bin')}:${process.env.PATH}`,
      PUID: String(USER),
      PGID: String(USER),
      SSH_DIR: dir,
      SSH_CONFIG: join(dir, 'config'),
      TUNNEL_CONFIG: files.config,
      TUNNEL_STATE_DIR: files.state,
      TUNNEL_SOCKET: files.socket,
    });
    if (ssh === 'refused') {
      expect(entry.exitCode).toBe(1);
      expect(entry.stderr).toContain(key.kubelet ? manifestFix : `fix: chmod 600 ${dir}/id_ed25519`);
      // The same lines as check.
      const items = (text: string) => text.split('\n').filter((l) => l.startsWith('- ') || l.startsWith('  fix: '));
      expect(items(entry.stderr.split('is not usable')[1] ?? '')).toEqual(items(check.stdout.split('problem')[1] ?? ''));
      // Where the fix is made: the pod's manifest, or the host (never PUID=0 for a root-owned Secret).
      if (key.kubelet) {
        expect(entry.stderr).toContain("is not usable (ssh refuses these); change the pod's manifest:");
        expect(entry.stderr).not.toMatch(/run on the host|PUID=/);
      } else {
        expect(entry.stderr).toContain('is not usable (ssh refuses these); run on the host:');
      }
    } else {
      // ssh's unreadable key is check's to find (it follows IdentityFile); the folder itself is usable.
      expect(entry.stderr).toBe('');
      expect(entry.stdout).toBe(`started as ${USER}`);
    }

    // The daemon, as uid 1500: refuses to start on what ssh refuses; otherwise its tunnel runs or fails as ssh does.
    const apiPort = await port();
    const daemon = asUser([process.execPath, MAIN, '--config', files.config, '--ssh-config', join(dir, 'config'), '--state-dir', files.state, '--socket', files.socket, '--listen', `127.0.0.1:${apiPort}`]);
    try {
      if (ssh === 'refused') {
        const r = await daemon;
        expect(r.exitCode).toBe(1);
        expect(r.stderr).toContain(key.kubelet ? manifestFix : `fix: chmod 600 ${dir}/id_ed25519`);
        return;
      }
      const want = ssh === 'accepted' ? 'RUNNING' : 'FAILED';
      const state = await waitTunnel(apiPort, want, () => daemon.exitCode);
      expect(state.status).toBe(want);
      if (ssh === 'accepted') expect(await roundTrip(localPort, 'through the Secret key')).toBe('through the Secret key');
      // ssh's own line names the key, and the tunnel's error says why.
      else expect(state.last_error).toBe(`the user ssh runs as cannot read the private key (tunnel-manager check names the fix): Load key "${dir}/id_ed25519": Permission denied`);
    } finally {
      daemon.kill('SIGTERM');
      await daemon;
    }
  });
});

interface Status {
  name: string;
  status: string;
  last_error: string | null;
}

/** Polls the daemon's /status until tunnel "db" is in `want`; returns its last entry. */
async function waitTunnel(apiPort: number, want: string, exited: () => number | null | undefined): Promise<Status> {
  const deadline = Date.now() + 30_000;
  let last: Status = { name: 'db', status: '(no answer)', last_error: null };
  while (Date.now() < deadline) {
    if (exited() !== undefined && exited() !== null) throw new Error(`the daemon exited (${exited()})`);
    try {
      const all = (await (await fetch(`http://127.0.0.1:${apiPort}/status`)).json()) as Status[];
      last = all.find((t) => t.name === 'db') ?? last;
      if (last.status === want) return last;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

