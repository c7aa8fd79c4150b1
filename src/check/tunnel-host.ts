import { lookup } from 'node:dns/promises';
import { constants, type Stats } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname } from 'node:path';
import type { CheckProblem, TunnelResolution } from './report.js';
import { isKubeletManaged } from './kubelet-volume.js';
import { shellQuote, sshRefusesKey, unprotectedKeyProblem, unreadableKeyProblem } from './rules.js';
import { sshConfigReader } from '../ssh-config/read.js';
import { first, type HostInfo } from '../ssh-config/settings.js';
import { expandIdentityPath, isDefaultIdentity } from './identity.js';
import { HOP_FALLBACK, hopHost, jumpChain } from '../ssh-config/jump-hops.js';

/** What checking one tunnel's host needs to know about the machine. */
export interface HostCheckContext {
  sshBin: string;
  sshConfigPath: string | null;
  /** True when the SSH config is not a regular file (`/dev/null`): nothing can be added to it. */
  sshConfigSpecial: boolean;
  /** The SSH directory, whose files the directory check already covers. */
  sshDir: string | null;
  uid: number;
  /** True when this process runs as `uid` (then access(2) answers for it). */
  runningAsUid: boolean;
  home: string;
  localUser: string;
  /** SSH_AUTH_SOCK of the environment the daemon runs in. */
  agentSocket: string | null;
  /**
   * A path as the user reaches it, for fixes: in a container the SSH directory is the
   * host's (`~/.ssh`), mounted read-only, so a fix must name the host's path to run.
   */
  show?: (path: string) => string;
}

export interface TunnelRef {
  name: string;
  hash: string;
  remote_host: string;
  /** The tunnel's ssh_options: they can change Port, HostName, User, ProxyJump. */
  ssh_options: Readonly<Record<string, string>>;
}

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

/** Readable by `uid`: asked of the kernel when we are that uid, else judged by mode bits. */
async function readableBy(path: string, st: Stats, ctx: HostCheckContext): Promise<boolean> {
  if (ctx.runningAsUid) {
    return access(path, constants.R_OK).then(() => true, () => false);
  }
  if (ctx.uid === 0) return true;
  return st.uid === ctx.uid ? (st.mode & 0o400) !== 0 : (st.mode & 0o004) !== 0;
}

async function resolves(hostname: string): Promise<boolean> {
  if (isIP(hostname) !== 0) return true;
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 3000).unref());
  return Promise.race([lookup(hostname).then(() => true, () => false), timeout]);
}

/**
 * Appends a Host block to an SSH config file that may not exist yet, nor its folder (a
 * fresh account has no ~/.ssh): the folder is made private first, and the file ends 600,
 * as ssh wants. The alias goes in as a printf argument, so no character of it is format.
 */
function appendHostFix(cfg: string, alias: string): string {
  const q = shellQuote(cfg);
  return `mkdir -p -m 700 ${shellQuote(dirname(cfg))} && printf '\\nHost %s\\n  HostName ADDRESS\\n' ${shellQuote(alias)} >> ${q} && chmod 600 ${q}`;
}

/**
 * Creates a key where ssh looks for it and installs it on the server. Safe to run for
 * every tunnel that needs it: a key made by an earlier fix is kept (ssh-keygen would
 * stop to ask before overwriting it), and ssh-copy-id reads the same SSH config as the
 * daemon, so an alias of that file resolves for it too.
 */
function newKeyFix(key: string, remoteHost: string, sshConfigPath: string | null): string {
  const k = shellQuote(key);
  const config = sshConfigPath === null ? '' : ` -F ${shellQuote(sshConfigPath)}`;
  return `mkdir -p -m 700 ${shellQuote(dirname(key))} && { test -e ${k} || ssh-keygen -q -t ed25519 -N '' -f ${k}; } && ssh-copy-id${config} -i ${k} ${shellQuote(remoteHost)}`;
}

/**
 * Resolves a tunnel's `remote_host` with `ssh -G` and checks what ssh will need:
 * the host name resolves (unless a ProxyJump/ProxyCommand reaches it), and keys.
 *
 * Keys: an IdentityFile the config names must exist and be readable. The defaults
 * ssh tries when none is named (~/.ssh/id_rsa, id_ed25519, …) may be missing, as long
 * as at least one identity is usable or an agent (SSH_AUTH_SOCK, IdentityAgent) or a
 * PKCS#11 provider can supply keys. A key outside the SSH directory must also be 600,
 * since ssh refuses a private key others can read.
 */
export async function checkTunnelHost(
  t: TunnelRef,
  ctx: HostCheckContext,
): Promise<{ resolution: TunnelResolution | null; info: HostInfo | null; problems: CheckProblem[]; notes: string[] }> {
  const where = `tunnel "${t.name}" (remote_host ${t.remote_host})`;
  const show = ctx.show ?? ((path: string) => path);
  // The same ssh -G the daemon reads, with the tunnel's own options: what ssh will really use.
  const read = await sshConfigReader(ctx.sshBin, ctx.sshConfigPath)({ host: t.remote_host, options: t.ssh_options });
  if (!read.ok) return { resolution: null, info: null, problems: [{ where, what: `ssh -G failed: ${read.error}`, fix: null }], notes: [] };
  const s = read.value.settings;
  const hostname = read.value.info.hostname ?? t.remote_host;
  const user = read.value.info.user ?? ctx.localUser;
  const port = read.value.info.port;
  const problems: CheckProblem[] = [];
  const notes: string[] = [];

  const proxied = read.value.info.endpoint === null;
  if (!proxied && !(await resolves(hostname))) {
    const cfg = show(ctx.sshConfigPath ?? `${ctx.home}/.ssh/config`);
    const alias = t.remote_host.includes('@') ? t.remote_host.slice(t.remote_host.indexOf('@') + 1) : t.remote_host;
    problems.push(
      hostname.toLowerCase() !== alias.toLowerCase()
        ? {
            where,
            what: `host name "${hostname}" (what the SSH config ${cfg} gives as the HostName of ${alias}) does not resolve: correct that HostName`,
            fix: null,
          }
        : ctx.sshConfigSpecial
        ? {
            where,
            what: `host name "${hostname}" does not resolve, and the SSH config ${cfg} can hold no Host entry: use an SSH config file with a Host ${alias} entry and its HostName (--ssh-config), or a host name that resolves`,
            fix: null,
          }
        : {
            where,
            what: `host name "${hostname}" does not resolve: add a Host ${alias} entry to the SSH config, with the server's address in place of ADDRESS`,
            fix: appendHostFix(cfg, alias),
          },
    );
  }

  for (const hop of jumpChain(read.value.info.proxyJump)) {
    const named = hopHost(hop);
    if (!named.ok) notes.push(`${where}: jump host "${hop}" (${named.error}) cannot be named in the daemon's ssh config, so its own UserKnownHostsFile is not read: it reads ${HOP_FALLBACK}`);
  }

  const agentSetting = first(s, 'identityagent');
  const agent =
    (agentSetting !== undefined && agentSetting !== 'none' && agentSetting !== 'SSH_AUTH_SOCK') ||
    ((agentSetting === undefined || agentSetting === 'SSH_AUTH_SOCK') && ctx.agentSocket !== null) ||
    (first(s, 'pkcs11provider') ?? 'none') !== 'none';

  const identities: TunnelResolution['identities'] = [];
  const missingDefaults: string[] = [];
  let missingNamed = 0;
  for (const raw of s.get('identityfile') ?? []) {
    const path = expandIdentityPath(raw, {
      home: ctx.home,
      localUser: ctx.localUser,
      hostname,
      remoteUser: user,
      port,
    });
    if (path === null) {
      notes.push(`${where}: IdentityFile ${raw} has a token the check does not expand; not checked`);
      continue;
    }
    const st = await statOrNull(path);
    if (st === null || !st.isFile()) {
      if (isDefaultIdentity(raw)) {
        missingDefaults.push(path);
        continue;
      }
      missingNamed++;
      problems.push({
        where,
        what: `IdentityFile ${show(path)} does not exist; correct the path in the SSH config, or create the key (without a passphrase: the daemon runs ssh with no one to type it) and install it on the server`,
        fix: newKeyFix(show(path), t.remote_host, ctx.sshConfigPath === null ? null : show(ctx.sshConfigPath)),
      });
      continue;
    }
    const readable = await readableBy(path, st, ctx);
    identities.push({ path, usable: readable });
    const layout = (await isKubeletManaged(path)) ? 'kubelet' : 'plain';
    if (!readable) problems.push(unreadableKeyProblem(show(path), ctx.uid, layout));
    const inSshDir = ctx.sshDir !== null && path.startsWith(`${ctx.sshDir.replace(/\/+$/, '')}/`);
    // ssh refuses a key of ours that others can read (one of another owner it only cannot read: above).
    if (!inSshDir && sshRefusesKey(st.mode, st.uid, ctx.uid)) problems.push(unprotectedKeyProblem(show(path), st.mode, st.uid, layout));
  }
  // A named key that is missing has its own fix above, which gives the tunnel a key.
  if (!identities.some((i) => i.usable) && !agent && missingNamed === 0) {
    const key = show(`${ctx.home}/.ssh/id_ed25519`);
    problems.push({
      where,
      what:
        'no usable key: ' +
        (missingDefaults.length > 0 ? `none of ${missingDefaults.map(show).join(', ')} exists` : 'no identity file is usable') +
        ' and no SSH agent is set (SSH_AUTH_SOCK); create a key (without a passphrase: the daemon runs ssh with no one to type it) and install it on the server',
      fix: newKeyFix(key, t.remote_host, ctx.sshConfigPath === null ? null : show(ctx.sshConfigPath)),
    });
  }
  return {
    info: read.value.info,
    resolution: { name: t.name, hash: t.hash, remote_host: t.remote_host, hostname, user, port, identities, agent },
    problems,
    notes,
  };
}
