import { mkdir, lstat, readdir, readFile, readlink, stat, unlink } from 'node:fs/promises';
import net from 'node:net';
import { dirname } from 'node:path';
import { err, ok, type Result } from '../kernel/result.js';
import { folderProblem } from '../edge/owned-path.js';

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code;

/** Resolves true when something accepts a connection on the socket, false when refused. */
function somebodyListens(path: string, timeoutMs = 1000): Promise<Result<boolean, string>> {
  return new Promise((resolve) => {
    const s = net.connect({ path });
    const timer = setTimeout(() => { s.destroy(); resolve(ok(true)); }, timeoutMs);
    s.once('connect', () => { clearTimeout(timer); s.destroy(); resolve(ok(true)); });
    s.once('error', (e) => {
      clearTimeout(timer);
      const code = errno(e);
      // Refused: a socket file whose daemon is gone (crash, kill -9).
      if (code === 'ECONNREFUSED' || code === 'ENOENT') resolve(ok(false));
      else resolve(err(`cannot check the socket ${path}: ${e.message}`));
    });
  });
}

/**
 * Linux's limit for a socket address (sun_path holds 108 bytes with the final NUL).
 * Node does not refuse a longer path: it binds the path cut at that length, elsewhere
 * than asked.
 */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Makes `path` ready to be bound: the folder exists (created 0700) and is not one that
 * another user could swap our socket in; a stale socket left by a dead daemon is
 * removed; a live one (another daemon answers) or a non-socket file is refused.
 */
export async function prepareSocketPath(path: string, uid: number | null): Promise<Result<void, string>> {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    return err(`cannot listen on ${path}: a unix socket path may have at most ${MAX_SOCKET_PATH_BYTES} bytes, this one has ${bytes}: choose a shorter --socket`);
  }
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    return err(`cannot create the socket folder ${dir}: ${(e as Error).message}`);
  }
  const d = await stat(dir);
  // The rule tunnel-cli and the panel apply before they connect (listener/owned-path.ts).
  const unsafe = folderProblem(dir, d, uid ?? d.uid);
  if (unsafe !== null) return err(`cannot listen on ${path}: ${unsafe}; remove it or choose another --socket`);

  let st;
  try {
    st = await lstat(path);
  } catch (e) {
    if (errno(e) === 'ENOENT') return ok(undefined);
    return err(`cannot inspect ${path}: ${(e as Error).message}`);
  }
  if (!st.isSocket()) return err(`${path} exists and is not a socket: remove it or choose another --socket`);
  const live = await somebodyListens(path);
  if (!live.ok) return live;
  if (live.value) {
    const pid = await listenerPid(path);
    return err(
      `another daemon${pid === null ? '' : ` (pid ${pid})`} is already listening on ${path}: stop it first, or give each daemon its own --socket, --state-dir and --listen (TUNNEL_SOCKET, TUNNEL_STATE_DIR, TUNNEL_API_LISTEN)`,
    );
  }
  try {
    await unlink(path);
  } catch (e) {
    if (errno(e) !== 'ENOENT') return err(`cannot remove the stale socket ${path}: ${(e as Error).message}`);
  }
  return ok(undefined);
}

/**
 * The pid of the process listening on the unix socket at `path`, when this account
 * can see it (Linux: the socket's inode in /proc/net/unix, then the process holding
 * it), else null.
 */
async function listenerPid(path: string): Promise<number | null> {
  try {
    const table = await readFile('/proc/net/unix', 'utf8');
    // Num RefCount Protocol Flags Type St Inode Path; flags 00010000: listening.
    const row = table.split('\n').find((l) => l.endsWith(` ${path}`) && l.split(/\s+/)[3] === '00010000');
    const inode = row?.trim().split(/\s+/)[6];
    if (inode === undefined) return null;
    const link = `socket:[${inode}]`;
    for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      for (const fd of fds) {
        if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === link) return Number(pid);
      }
    }
  } catch {
    // Not Linux, or /proc is not readable: the message goes without the pid.
  }
  return null;
}

/** The socket's inode once bound, so that close removes our socket and never a successor's. */
export async function socketInode(path: string): Promise<number | null> {
  try {
    return (await lstat(path)).ino;
  } catch {
    return null;
  }
}

export async function removeSocket(path: string, ino: number | null): Promise<void> {
  if (ino === null || (await socketInode(path)) !== ino) return;
  await unlink(path).catch(() => undefined);
}
