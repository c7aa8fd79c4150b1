// Start-up of the supervisor: checks and prepares the state dir (ours, 0700, a writable
// known_hosts), takes its lock, ends the ssh children a crashed predecessor left behind,
// writes the daemon's own ssh config, and reads the desired states. The running
// supervisor is supervisor.ts.
import { ChildRegistry, endLeftovers, programPath } from './process/children.js';
import { checkStateDirOwner, StateDirError } from '../settings/state-dir-owner.js';
import { lockStateDir } from './state/state-lock.js';
import { systemClock } from './clock.js';
import { DesiredStore } from './state/desired.js';
import { writeDaemonSshConfig } from './plan/ssh-config-file.js';
import { prepareStateDir, statePaths } from './state/state-files.js';
import { DEFAULTS } from './supervisor-deps.js';
import { prepareControlDir } from './connection/control-path.js';
import { Supervisor } from './supervisor.js';
import type { SupervisorOptions } from './types.js';
import type { SupervisorApi } from './types.js';

/**
 * Creates the supervisor: prepares the state dir (0700, writable known_hosts), ends
 * the ssh children a crashed predecessor left behind, and reads the desired states.
 * No tunnel starts before the first apply().
 */
export async function createSupervisor(opts: SupervisorOptions): Promise<SupervisorApi> {
  const clock = systemClock;
  const log = opts.log ?? (() => {});
  const paths = statePaths(opts.stateDir);
  const uid = process.getuid?.() ?? 0;
  const owned = checkStateDirOwner(paths.dir, uid);
  if (!owned.ok) throw new StateDirError(owned.error);
  prepareStateDir(paths);
  // Before the leftovers: a second daemon on this dir would end the first one's children.
  const lock = lockStateDir(paths.dir, process.pid);
  if (!lock.ok) throw new StateDirError(lock.error);
  const graceMs = DEFAULTS.graceMs;
  const owner = { uid, program: programPath(opts.sshBin, process.env.PATH) };
  const leftovers = await endLeftovers(paths.children, graceMs, clock, owner).catch((e: unknown) => {
    lock.value.release();
    throw e;
  });
  if (leftovers.ended.length > 0) log({ event: 'leftover_ssh_ended', pids: leftovers.ended });
  if (leftovers.stuck.length > 0) log({ event: 'leftover_ssh_stuck', pids: leftovers.stuck });
  if (leftovers.skipped.length > 0) {
    log({ event: 'leftover_not_ours', pids: leftovers.skipped, message: `left alone: not processes of uid ${uid} running ${owner.program ?? opts.sshBin}` });
  }
  const registry = new ChildRegistry(paths.children);
  registry.reset();
  const daemonSshConfig = writeDaemonSshConfig(paths, opts.sshConfigPath, log);
  const controlDir = prepareControlDir(paths.dir);
  if (!controlDir.ok) log({ event: 'shared_connections_unavailable', error: controlDir.error });
  const places = { knownHostsPath: paths.knownHosts, loginLogDir: paths.loginLogs, controlDir: controlDir.ok ? controlDir.value : null };
  return new Supervisor(opts, clock, log, registry, DesiredStore.load(paths.desired), places, graceMs, daemonSshConfig, lock.value);
}

