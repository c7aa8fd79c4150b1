/**
 * Whether a unix socket is the user's own (SPEC §6): before `tunnel-cli` or the panel
 * send a byte — a command, a one-time code typed at a login — the socket must belong
 * to the user, and so must every folder above it, or to root: another account cannot
 * then have planted any of them. The socket's own folder must also be writable by no
 * other account (a sticky folder such as /tmp excepted: there no one may rename or
 * remove another's entries), as the daemon demands of it, or the socket could be
 * swapped between this check and the connection. A folder higher up may be open to
 * all (a Kubernetes emptyDir is 0777): replacing anything below it makes a folder the
 * other account owns, which the ownership check sees.
 */
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { showAccount } from './account-names.js';

/** Why a folder above our socket is not to be trusted for `uid` (another account's), or null. */
function ownerProblem(dir: string, st: Pick<Stats, 'uid' | 'isDirectory'>, uid: number): string | null {
  if (!st.isDirectory()) return `${dir} is not a folder`;
  if (st.uid !== uid && st.uid !== 0) {
    return `the folder ${dir} belongs to ${showAccount(st.uid)}, not to you (${showAccount(uid)}) or root: another account may have made it to catch what you send`;
  }
  return null;
}

/** Why a folder may not hold our socket for `uid`, or null when it may. */
export function folderProblem(dir: string, st: Pick<Stats, 'uid' | 'mode' | 'isDirectory'>, uid: number): string | null {
  const owner = ownerProblem(dir, st, uid);
  if (owner !== null) return owner;
  const sticky = (st.mode & 0o1000) !== 0;
  if ((st.mode & 0o022) !== 0 && !sticky) {
    return `the folder ${dir} is writable by other accounts (mode ${(st.mode & 0o777).toString(8)}), who could replace the socket in it: run chmod go-w ${dir}`;
  }
  return null;
}

/**
 * Why the socket at `path` is not to be trusted by `uid`, or null. A missing socket is
 * not a problem here (connecting says so). `named`: the user gave the path (a flag,
 * TUNNEL_SOCKET) rather than taking the default; root may then use a socket of the
 * account it named the daemon's (`docker compose exec` runs as root, the daemon as its
 * own account), in folders of root's or that account's that no third account can write.
 * A default path is the user's own or nothing: that is where another account plants one.
 */
export function socketTrustProblem(path: string, uid: number, named = false): string | null {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return `cannot inspect the socket ${path}: ${(e as Error).message}`;
  }
  let st: Stats;
  try {
    st = lstatSync(real);
  } catch (e) {
    return `cannot inspect the socket ${path}: ${(e as Error).message}`;
  }
  if (!st.isSocket()) return `${path} is not a socket`;
  const vouched = uid === 0 && named;
  if (st.uid !== uid && !vouched) {
    return `the socket ${path} belongs to ${showAccount(st.uid)}, not to you (${showAccount(uid)}): it is not your daemon's; remove it, or start your daemon with its own --socket`;
  }
  // The folders may be root's or the socket owner's, which for a vouched socket is the daemon's account.
  const owner = st.uid;
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    let d: Stats;
    try {
      d = lstatSync(dir);
    } catch (e) {
      return `cannot inspect the folder ${dir}: ${(e as Error).message}`;
    }
    const problem = dir === dirname(real) ? folderProblem(dir, d, owner) : ownerProblem(dir, d, owner);
    if (problem !== null) return `the socket ${path} is not safe to use: ${problem}`;
    if (dir === dirname(dir)) return null;
  }
}
