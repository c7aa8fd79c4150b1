/**
 * Accounts by name and by uid, for the setting that names the accounts let in
 * (TUNNEL_API_ALLOWED_USERS) and for the refusals that name who was refused. Names
 * are looked up through the system's user database (`getent passwd`, so that
 * accounts from LDAP or sssd count as well as /etc/passwd's).
 */
import { execFileSync } from 'node:child_process';

/** The accounts let in besides the owner and root: uids, or every account. */
export type AllowedAccounts = { kind: 'some'; uids: ReadonlySet<number> } | { kind: 'any' };

export const NO_OTHER_ACCOUNT: AllowedAccounts = { kind: 'some', uids: new Set() };

/** The passwd entry of a name or a uid: [name, uid], or null when there is none. */
export type PasswdLookup = (key: string) => { name: string; uid: number } | null;

export const getentPasswd: PasswdLookup = (key) => {
  try {
    const line = execFileSync('getent', ['passwd', '--', key], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 });
    const [name, , uid] = line.split('\n')[0]!.split(':');
    return name !== undefined && uid !== undefined && /^\d+$/.test(uid) ? { name, uid: Number(uid) } : null;
  } catch {
    return null;
  }
};

/**
 * TUNNEL_API_ALLOWED_USERS: account names or uids, comma-separated, or `*` for every
 * account of the machine (the behaviour before the rule, for a single-user machine
 * where the rule cannot read who connects). A name that no account has is a problem,
 * not ignored: a typo would otherwise leave the account out without a word.
 */
export function readAllowedAccounts(text: string | undefined, lookup: PasswdLookup, problems: string[]): AllowedAccounts {
  const items = (text ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.includes('*')) {
    if (items.length > 1) problems.push(`TUNNEL_API_ALLOWED_USERS: "*" already lets every account in; remove the other names (${items.filter((i) => i !== '*').join(', ').slice(0, 200)})`);
    return { kind: 'any' };
  }
  const uids = new Set<number>();
  for (const item of items) {
    if (/^\d+$/.test(item)) {
      uids.add(Number(item));
      continue;
    }
    const entry = /^[A-Za-z0-9._][A-Za-z0-9._-]*\$?$/.test(item) ? lookup(item) : null;
    if (entry === null) {
      problems.push(`TUNNEL_API_ALLOWED_USERS: expected account names or uids separated by commas, found ${JSON.stringify(item.slice(0, 100))}, which is no account of this machine (getent passwd ${item.slice(0, 100)})`);
    } else uids.add(entry.uid);
  }
  return { kind: 'some', uids };
}

// Names found for uids, kept for the refusals that name them (bounded: a few accounts connect).
const names = new Map<number, string | null>();
const NAME_MEMORY = 64;

/** "uid 1001 (alice)", or "uid 1001" when the uid has no name. */
export function showAccount(uid: number, lookup: PasswdLookup = getentPasswd): string {
  let name = names.get(uid);
  if (name === undefined) {
    name = lookup(String(uid))?.name ?? null;
    if (names.size >= NAME_MEMORY) names.clear();
    names.set(uid, name);
  }
  return name === null ? `uid ${uid}` : `uid ${uid} (${name})`;
}
