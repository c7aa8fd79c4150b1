// From a tunnel spec and what `ssh -G` said about its host to everything a runner
// needs: the argv, where to probe, how long a start may take.
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';
import { forwardSpec, sshArgs, SSH_DEFAULTS } from '../tunnel/ssh-args.js';
import { checkTarget } from '../tunnel/check-target.js';
import type { TunnelPlan } from './runner.js';
import { spacingKey } from './spacing.js';
import type { HostInfo } from '../ssh-config/settings.js';
import { oursFirst } from '../ssh-config/daemon-config.js';

export interface PlanContext {
  sshBin: string;
  /** The daemon's ssh config (ssh-config/daemon-config.ts), which Includes the user's. */
  sshConfigPath: string | null;
  mode: DirectionMode;
  /** The daemon's writable known_hosts, listed first. */
  knownHostsPath: string;
  /** Where an interactive tunnel's ssh writes its debug lines (-E), as `<hash>.log`. */
  loginLogDir: string;
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

export function buildPlan(spec: TunnelSpec, ctx: PlanContext, host: HostInfo): TunnelPlan {
  const { flag } = forwardSpec(spec, ctx.mode);
  const args = sshArgs({
    spec,
    mode: ctx.mode,
    sshConfigPath: ctx.sshConfigPath,
    knownHostsFiles: knownHostsList(ctx.knownHostsPath, host),
    debugLog: spec.interactive ? `${ctx.loginLogDir}/${spec.hash}.log` : null,
  });
  const connectTimeout = Number(optionValue(spec.ssh_options, 'ConnectTimeout') ?? SSH_DEFAULTS.ConnectTimeout);
  const startTimeoutS = (Number.isFinite(connectTimeout) && connectTimeout > 0 ? connectTimeout : 10) + START_MARGIN_S;
  return {
    spec,
    file: ctx.sshBin,
    args,
    flag,
    remoteBind: flag === '-R' ? spec.remote_port.host : null,
    sshEndpoint: host.endpoint,
    localBind: flag === '-L' ? { host: spec.local_port.host ?? '127.0.0.1', port: spec.local_port.port } : null,
    spacingKey: spacingKey(spec.remote_host),
    startTimeoutMs: startTimeoutS * 1000,
    checkTarget: checkTarget(spec, flag, host.endpoint),
  };
}
