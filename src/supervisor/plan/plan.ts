// From a tunnel spec and what `ssh -G` said about its host to everything a runner
// needs: the argv, where to probe, how long a start may take.
import type { DirectionMode, TunnelSpec } from '../../tunnel/spec.js';
import { forwardSpec, masterArgs, sshArgs, sshBaseArgs, SSH_DEFAULTS, type SshArgsInput } from '../../tunnel/ssh-args.js';
import { sharesConnection } from '../../tunnel/spec.js';
import { connectionId, controlPath } from '../connection/control-path.js';
import { checkTarget } from '../../tunnel/check-target.js';
import type { SharedForward, TunnelPlan } from './tunnel-plan.js';
import { spacingKey } from '../spacing.js';
import type { HostInfo } from '../../ssh-config/settings.js';
import { oursFirst } from '../../ssh-config/daemon-config.js';

export interface PlanContext {
  sshBin: string;
  /** The daemon's ssh config (ssh-config/daemon-config.ts), which Includes the user's. */
  sshConfigPath: string | null;
  mode: DirectionMode;
  /** The daemon's writable known_hosts, listed first. */
  knownHostsPath: string;
  /** Where an interactive tunnel's ssh writes its debug lines (-E), as `<hash>.log` (a shared login's: `<connection id>.log`). */
  loginLogDir: string;
  /** Where shared connections' control sockets go; null: none could be prepared, every tunnel has its own ssh. */
  controlDir: string | null;
}

// Beyond ConnectTimeout (TCP connect and banner), time for key exchange,
// authentication and the forward's set-up.
const START_MARGIN_S = 5;

function optionValue(options: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(options).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : options[key];
}

/**
 * The known_hosts list: ours first (ssh writes accepted keys to the first file), then
 * the files the user's config gives this host. A `-o UserKnownHostsFile` on the
 * command line replaces the config's value, so without the second part a user whose
 * config names its own file per host would lose it and get a host key prompt (or,
 * with accept-new, a silent trust of an unknown key that their file could have refuted).
 */
export function knownHostsList(ours: string, host: HostInfo): string[] {
  return oursFirst(ours, host.knownHostsFiles);
}

/**
 * A shared tunnel's forward and its connection (SPEC §14): the connection's id is the
 * hash of its login's argv — host and whole effective option set — so tunnels whose
 * logins would be the same share it, and any difference gives another connection.
 */
function sharedPlan(spec: TunnelSpec, ctx: PlanContext, input: SshArgsInput, host: HostInfo): SharedForward | null {
  if (!sharesConnection(spec) || ctx.controlDir === null) return null;
  // An interactive tunnel's debug file is its own; the login it shares writes to the
  // connection's, so that file is no part of the identity.
  const login: SshArgsInput = { ...input, debugLog: null };
  const id = connectionId([ctx.sshBin, ...sshBaseArgs(login), '--', spec.remote_host]);
  const base = sshBaseArgs(spec.interactive ? { ...login, debugLog: `${ctx.loginLogDir}/${id}.log` } : login);
  const path = controlPath(ctx.controlDir, id);
  const fwd = forwardSpec(spec, ctx.mode);
  return {
    connection: {
      id,
      file: ctx.sshBin,
      args: masterArgs(base, spec.remote_host, path),
      controlPath: path,
      spacingKey: spacingKey(spec.remote_host),
      sshEndpoint: host.endpoint,
      interactive: spec.interactive,
    },
    forward: { flag: fwd.flag, value: fwd.value },
    port: fwd.flag === '-R' ? spec.remote_port.port : spec.local_port.port,
  };
}

export function buildPlan(spec: TunnelSpec, ctx: PlanContext, host: HostInfo): TunnelPlan {
  const { flag } = forwardSpec(spec, ctx.mode);
  const input: SshArgsInput = {
    spec,
    mode: ctx.mode,
    sshConfigPath: ctx.sshConfigPath,
    knownHostsFiles: knownHostsList(ctx.knownHostsPath, host),
    debugLog: spec.interactive ? `${ctx.loginLogDir}/${spec.hash}.log` : null,
  };
  const args = sshArgs(input);
  const connectTimeout = Number(optionValue(spec.ssh_options, 'ConnectTimeout') ?? SSH_DEFAULTS.ConnectTimeout);
  const startTimeoutS = (Number.isFinite(connectTimeout) && connectTimeout > 0 ? connectTimeout : 10) + START_MARGIN_S;
  return {
    spec,
    file: ctx.sshBin,
    args,
    flag,
    remoteBind: flag === '-R' ? spec.remote_port.host : null,
    sshEndpoint: host.endpoint,
    localBind: flag !== '-R' ? { host: spec.local_port.host ?? '127.0.0.1', port: spec.local_port.port } : null,
    spacingKey: spacingKey(spec.remote_host),
    startTimeoutMs: startTimeoutS * 1000,
    checkTarget: checkTarget(spec, flag, host.endpoint),
    shared: sharedPlan(spec, ctx, input, host),
  };
}
