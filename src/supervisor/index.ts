export { createSupervisor } from './supervisor-start.js';
export type { ApplyReport, SupervisorApi, SupervisorEvent, SupervisorOptions } from './types.js';
export type { Clock } from './clock.js';
export type { SpawnSsh, SshChild, ChildExit } from './process/ssh-process.js';
export type { Probe, ProbeTarget } from './health/probe.js';
export type { BackoffPolicy } from './backoff.js';
export type { FailureReason } from './process/ssh-exit-classify.js';
