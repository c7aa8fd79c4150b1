import { userInfo, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { entryIndexOf } from '../config/tree.js';
import { formatProblem as formatConfigProblem, loadConfigFile } from '../config/load.js';
import { mergeRepeated, type CheckProblem, type CheckReport } from './report.js';
import type { DirectionMode } from '../tunnel/spec.js';
import { checkReferenceHashes } from './reference-hashes.js';
import { remoteListenClashes } from './remote-listens.js';
import { checkSshDir, isSpecialSshConfig, showPathUnder } from './ssh-dir.js';
import { checkStateDir } from './state-dir.js';
import { checkTunnelHost } from './tunnel-host.js';
import { forwardFlag } from '../tunnel/ssh-args.js';
import { checkTarget } from '../tunnel/check-target.js';
import type { OwnListener } from '../tunnel/exposure.js';
import { apiListenOf, ownListeners } from '../settings/own-listeners.js';
import { exposureProblems } from './exposure.js';
import { unsetKeyVariables } from './env-refs.js';
import { unreachable } from '../kernel/unreachable.js';

export type { CheckProblem, CheckReport, TunnelResolution } from './report.js';
export { checkExitCode, formatReport } from './report.js';

/** What `tunnel-manager check` is asked to check; the daemon's own settings. */
export interface CheckOptions {
  configPath: string;
  /** `--ssh-config`/`SSH_CONFIG`, or null when ssh uses its default (~/.ssh/config). */
  sshConfigPath: string | null;
  stateDir: string;
  sshBin: string;
  /** The uid the daemon runs as; defaults to this process's. */
  uid?: number;
  /** Home directory that `~` means to ssh; defaults to the account's home. */
  home?: string;
  /** The SSH directory's path on the host (SSH_DIR_HOST), for fix commands in a container. */
  hostSshDir?: string;
  /** Where `${VAR}` in the proxy's keys is read from, as the daemon would; defaults to this process's environment. */
  env?: Record<string, string | undefined>;
  /** SSH_AUTH_SOCK; defaults to this process's environment. */
  agentSocket?: string | null;
  /** TUNNEL_DIRECTION_MODE: which side listens decides which tunnels conflict. */
  mode?: DirectionMode;
  /** The product's own listeners, for the exposure warnings; defaults to where this environment puts them. */
  ownListeners?: readonly OwnListener[];
}

function account(): { home: string; user: string } {
  try {
    const u = userInfo();
    return { home: u.homedir, user: u.username };
  } catch {
    // No passwd entry for this uid: ssh will say so itself when it is run.
    return { home: homedir(), user: String(process.getuid?.() ?? '') };
  }
}

/**
 * Checks everything the daemon needs and lists every problem at once: the SSH
 * directory (modes, owners, the config file), the config file, each tunnel's host as
 * ssh resolves it (host name, keys), and the state directory.
 */
export async function runChecks(opts: CheckOptions): Promise<CheckReport> {
  const processUid = process.getuid?.() ?? 0;
  const uid = opts.uid ?? processUid;
  const acct = account();
  const home = opts.home ?? acct.home;
  const agentSocket = opts.agentSocket !== undefined ? opts.agentSocket : (process.env.SSH_AUTH_SOCK || null);
  const problems: CheckProblem[] = [];
  const notes: string[] = [];
  const warnings: CheckProblem[] = [];
  const exposure: CheckProblem[] = [];

  const special = await isSpecialSshConfig(opts.sshConfigPath);
  const sshDir = opts.sshConfigPath !== null ? dirname(opts.sshConfigPath) : join(home, '.ssh');
  const show = showPathUnder(sshDir, opts.hostSshDir);
  let shownSshDir: string | null = show(sshDir);
  if (special) {
    shownSshDir = `(none: ${opts.sshConfigPath} is not a regular file, so no folder is checked)`;
  } else if (opts.sshConfigPath === null && !existsSync(sshDir)) {
    notes.push(`no SSH config file and no ${sshDir}: ssh uses its defaults and the agent`);
    shownSshDir = null;
  } else {
    const found = await checkSshDir(sshDir, opts.sshConfigPath, uid, show);
    problems.push(...found.refused);
    warnings.push(...found.warned);
  }

  const load = await loadConfigFile(opts.configPath, { mode: opts.mode ?? 'default' });
  const tunnels: CheckReport['tunnels'] = [];
  switch (load.kind) {
    case 'missing':
      notes.push(`${opts.configPath} does not exist yet: the daemon starts with no tunnels and picks it up when it appears`);
      break;
    case 'invalid':
      for (const p of load.problems) problems.push({ where: opts.configPath, what: formatConfigProblem(p), fix: null });
      break;
    case 'partial':
    case 'ok': {
      if (load.kind === 'partial') {
        for (const p of load.problems) {
          const index = entryIndexOf(p.field);
          const what = index === null ? formatConfigProblem(p) : `${formatConfigProblem(p)} (this entry is left out; the others run)`;
          problems.push({ where: opts.configPath, what, fix: null });
        }
      }
      for (const w of load.warnings) notes.push(`${opts.configPath}: ${formatConfigProblem(w)}`);
      const ctx = {
        sshBin: opts.sshBin,
        sshConfigPath: opts.sshConfigPath,
        sshConfigSpecial: special,
        sshDir: special ? null : sshDir,
        uid,
        runningAsUid: uid === processUid,
        home,
        localUser: acct.user,
        agentSocket,
        show,
      };
      // One at a time: each is a short ssh -G, and a DNS lookup at most.
      for (const t of load.config.tunnels) {
        const r = await checkTunnelHost({ name: t.name, hash: t.hash, remote_host: t.remote_host, ssh_options: t.ssh_options }, ctx);
        if (r.resolution !== null) tunnels.push(r.resolution);
        problems.push(...r.problems);
        notes.push(...r.notes);
        // The same rule the daemon uses for where a health_check connects.
        const flag = forwardFlag(t.direction, opts.mode ?? 'default');
        if (t.health_check !== undefined && r.info !== null && checkTarget(t, flag, r.info.endpoint) === null) {
          notes.push(`tunnel "${t.name}": its health_check will not run: the daemon cannot reach the listening side of this ${flag} forward (a -R bound to loopback on the server, or a server behind a proxy); bind it to an address the daemon reaches, or drop the check`);
        }
      }
      problems.push(...unsetKeyVariables(opts.configPath, load.config.proxy, opts.env ?? process.env));
      problems.push(...remoteListenClashes(load.config.tunnels, tunnels, opts.mode ?? 'default'));
      exposure.push(...exposureProblems(load.config.tunnels, opts.mode ?? 'default', opts.ownListeners ?? ownListeners(apiListenOf({}, process.env), process.env)));
      break;
    }
    default:
      return unreachable(load, 'config load result');
  }

  const reference = await checkReferenceHashes(opts.configPath);
  problems.push(...reference.problems);
  notes.push(...reference.notes);

  problems.push(...(await checkStateDir(opts.stateDir, uid, uid === processUid)));

  return {
    configPath: opts.configPath,
    sshConfigPath: opts.sshConfigPath,
    sshDir: shownSshDir,
    stateDir: opts.stateDir,
    tunnels,
    notes,
    warnings: mergeRepeated(warnings),
    exposure,
    problems: mergeRepeated(problems),
  };
}
