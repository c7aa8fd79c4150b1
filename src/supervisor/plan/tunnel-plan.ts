// What a runner needs to run one tunnel, worked out by plan.ts from the spec and what
// `ssh -G` says about its host.
import type { TunnelSpec } from '../../tunnel/spec.js';
import type { ForwardFlag } from '../../tunnel/ssh-args.js';
import type { ConnectionPlan } from '../connection/connection-types.js';
import type { ControlForward } from '../connection/control-command.js';
import type { CheckTarget } from '../health/health-check-run.js';

/** Everything needed to run one tunnel, worked out by the supervisor from the spec and `ssh -G`. */
export interface TunnelPlan {
  spec: TunnelSpec;
  file: string;
  args: string[];
  flag: ForwardFlag;
  /** For -R: the remote bind address as configured (null: the server's default). */
  remoteBind: string | null;
  /** The ssh server's address to probe while it is unreachable; null behind a proxy. */
  sshEndpoint: { host: string; port: number } | null;
  /** For -L: our listening address, probed while it is busy. */
  localBind: { host: string; port: number } | null;
  /** Spawns with the same key are paced (see SpawnSpacer). */
  spacingKey: string;
  /** Kill and retry an attempt whose forward is not established by then. */
  startTimeoutMs: number;
  /** Where a health_check connects through the forward (null: out of the daemon's reach). */
  checkTarget: CheckTarget | null;
  /** The forward on a shared connection (SPEC §14); null: an ssh of its own, as `args` says. */
  shared: SharedForward | null;
}

/** A tunnel's forward on its host's shared connection. */
export interface SharedForward {
  connection: ConnectionPlan;
  forward: ControlForward;
  /** The listening port, to tell the master's lines about it apart. */
  port: number;
}
