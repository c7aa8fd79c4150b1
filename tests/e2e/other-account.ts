// A second local account, made by the suite (useradd) and used through setpriv, for the
// rules about other accounts on the machine (SPEC §6, "No other account").
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export const OTHER = 'tm-visitor';

export interface OtherAccount {
  name: string;
  uid: number;
  gid: number;
}

/** The account, made when missing. The suite runs as root, which useradd and setpriv need. */
export function otherAccount(): OtherAccount {
  if (process.getuid?.() !== 0) throw new Error('the tests of other accounts make one with useradd and act as it with setpriv, which need root; run the suite as root (scripts/test does)');
  const id = (flag: string) => Number(execFileSync('id', [flag, OTHER], { encoding: 'utf8' }).trim());
  try {
    return { name: OTHER, uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', OTHER]);
    return { name: OTHER, uid: id('-u'), gid: id('-g') };
  }
}

const asArgs = (a: OtherAccount) => ['--reuid', String(a.uid), '--regid', String(a.gid), '--clear-groups'];

/** Runs a command as the account; resolves with its exit code and output. */
export function runAs(a: OtherAccount, command: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('setpriv', [...asArgs(a), ...command], { cwd: opts.cwd ?? '/', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts a long-running command as the account (a server of its own). */
export function spawnAs(a: OtherAccount, command: string[]): ChildProcess {
  return spawn('setpriv', [...asArgs(a), ...command], { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' } });
}

/** curl as the account: the status and the body. */
export async function curlAs(a: OtherAccount, url: string, args: string[] = []): Promise<{ status: number; body: string }> {
  const r = await runAs(a, ['curl', '-s', '-o', '-', '-w', '\n%{http_code}', ...args, url]);
  const at = r.stdout.lastIndexOf('\n');
  return { status: Number(r.stdout.slice(at + 1)), body: r.stdout.slice(0, at) };
}

/** The status line of a WebSocket upgrade made with curl as the account. */
export async function upgradeAs(a: OtherAccount, url: string, headers: Record<string, string> = {}): Promise<number> {
  const h = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers };
  const r = await runAs(a, ['curl', '-s', '-i', '--max-time', '3', ...Object.entries(h).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url]);
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(r.stdout)?.[1] ?? 0);
}
