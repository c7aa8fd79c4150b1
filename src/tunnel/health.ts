// Health: whether a RUNNING tunnel carries anything (SPEC §5). `status` says the
// forward is established; health says what the evidence since then shows. Pure: fed
// with ssh's output lines, the process state from /proc and health_check results.

import { unreachable } from '../kernel/unreachable.js';

export type HealthState = 'ok' | 'degraded' | 'unknown';

/** The `health` field of a status record, `since` in epoch milliseconds here (ISO in the record). */
export interface Health {
  state: HealthState;
  /** A sentence saying why, or null when ok. */
  reason: string | null;
  since: number;
}

export type HealthObservation =
  /** The forward was established; `remoteBind` is the -R bind address as configured. */
  | { kind: 'established'; flag: '-L' | '-R' | '-D'; remoteBind: string | null }
  /** Not RUNNING (any other status): nothing carries data. */
  | { kind: 'down' }
  /** One line of ssh's stderr (LogLevel DEBUG1). */
  | { kind: 'line'; line: string }
  /** /proc/<pid>/stat read: state `T` (stopped) or anything else. */
  | { kind: 'process'; stopped: boolean }
  /** A health_check attempt's outcome; `detail` says what failed. */
  | { kind: 'check'; ok: boolean; detail: string }
  /** Time passing (the periodic process check), to confirm channels that did not fail. */
  | { kind: 'tick' };

/** Causes tracked separately, so that one kind of evidence clears only its own kind. */
interface Causes {
  channel: string | null;
  stopped: boolean;
  check: string | null;
  /** Why ssh cannot tell (GatewayPorts), until a check passes. */
  unknown: string | null;
}

/** Health plus what it was worked out from. */
export interface HealthModel {
  health: Health;
  running: boolean;
  causes: Causes;
  /** Channels ssh opened and that have neither failed nor been confirmed: id → opened at. */
  pending: ReadonlyMap<string, number>;
}

/**
 * A channel that has not failed this long after ssh opened it was accepted: a refusal
 * (target closed, forwarding prohibited) comes back within one round trip.
 */
export const CHANNEL_CONFIRM_MS = 3_000;

const NO_CAUSES: Causes = { channel: null, stopped: false, check: null, unknown: null };
const DOWN_REASON = 'the forward is not established';

export function initialHealth(at: number): HealthModel {
  return { health: { state: 'unknown', reason: DOWN_REASON, since: at }, running: false, causes: NO_CAUSES, pending: new Map() };
}

function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\./.test(h);
}

/** The sentence for a -R bind the server may have narrowed to loopback. */
export function gatewayPortsReason(bind: string): string {
  return `remote bind ${bind} needs "GatewayPorts clientspecified" (or yes) on the server, which may have bound loopback only without telling ssh; unverified`;
}

// -L: "channel 1: open failed: connect failed: Connection refused" (also
// "administratively prohibited: open failed"); -R: "debug1: channel 0: connection
// failed: Connection refused", then "connect_to localhost port 5432: failed."
const OPEN_FAILED = /^channel (\d+): open failed: (.*)$/;
const R_CONNECT_FAILED = /^debug1: channel (\d+): connection failed: (.*)$/;
const L_OPENED = /^debug1: channel (\d+): new direct-tcpip /;
const R_OPENED = /^debug1: channel (\d+): new forwarded-tcpip /;
const R_CONNECTED = /^debug1: channel (\d+): connected to /;
const FREED = /^debug1: channel (\d+): free: /;

function withChannel(m: HealthModel, id: string, failure: string | null): HealthModel {
  const pending = new Map(m.pending);
  const wasPending = pending.delete(id);
  if (failure !== null) return { ...m, pending, causes: { ...m.causes, channel: failure } };
  // Only a channel we saw opened proves anything; "free" also follows listeners.
  if (!wasPending) return { ...m, pending };
  return { ...m, pending, causes: { ...m.causes, channel: null } };
}

function observeLine(m: HealthModel, raw: string, at: number): HealthModel {
  const line = raw.trim();
  let hit = OPEN_FAILED.exec(line);
  if (hit?.[1] !== undefined) return withChannel(m, hit[1], `connections through the forward fail: ssh reports "${hit[2] ?? ''}"`);
  hit = R_CONNECT_FAILED.exec(line);
  if (hit?.[1] !== undefined) return withChannel(m, hit[1], `connections through the forward fail: the local target refuses them ("${hit[2] ?? ''}")`);
  hit = L_OPENED.exec(line) ?? R_OPENED.exec(line);
  if (hit?.[1] !== undefined) {
    const pending = new Map(m.pending);
    pending.set(hit[1], at);
    return { ...m, pending };
  }
  hit = R_CONNECTED.exec(line) ?? FREED.exec(line);
  if (hit?.[1] !== undefined) return withChannel(m, hit[1], null);
  return m;
}

/**
 * Whether the model waits on anything a `tick` settles (channels not yet confirmed):
 * when not, a tick changes nothing and the caller need not send it.
 */
export function awaitsTick(m: HealthModel): boolean {
  return m.pending.size > 0;
}

function confirmOld(m: HealthModel, at: number): HealthModel {
  let confirmed = false;
  const pending = new Map(m.pending);
  for (const [id, opened] of pending) {
    if (at - opened >= CHANNEL_CONFIRM_MS) {
      pending.delete(id);
      confirmed = true;
    }
  }
  if (!confirmed) return m.pending.size === pending.size ? m : { ...m, pending };
  return { ...m, pending, causes: { ...m.causes, channel: null } };
}

/** What the causes add up to; the most serious cause is the one named. */
function judge(m: HealthModel): Omit<Health, 'since'> {
  if (!m.running) return { state: 'unknown', reason: DOWN_REASON };
  const c = m.causes;
  if (c.stopped) return { state: 'degraded', reason: 'the ssh process is stopped (state T in /proc, e.g. SIGSTOP): nothing is forwarded' };
  if (c.check !== null) return { state: 'degraded', reason: c.check };
  if (c.channel !== null) return { state: 'degraded', reason: c.channel };
  if (c.unknown !== null) return { state: 'unknown', reason: c.unknown };
  return { state: 'ok', reason: null };
}

function reduce(m: HealthModel, o: HealthObservation, at: number): HealthModel {
  switch (o.kind) {
    case 'established': {
      const unknown = o.flag === '-R' && o.remoteBind !== null && !isLoopback(o.remoteBind) ? gatewayPortsReason(o.remoteBind) : null;
      return { ...m, running: true, causes: { ...NO_CAUSES, unknown }, pending: new Map() };
    }
    case 'down':
      return { ...m, running: false, causes: NO_CAUSES, pending: new Map() };
    case 'line':
      return m.running ? observeLine(m, o.line, at) : m;
    case 'process':
      return { ...m, causes: { ...m.causes, stopped: o.stopped } };
    case 'check':
      // A passing check is the strongest evidence: it clears what lines suggested too.
      return o.ok
        ? { ...m, pending: new Map(), causes: { ...m.causes, check: null, channel: null, unknown: null } }
        : { ...m, causes: { ...m.causes, check: `health check failed: ${o.detail}` } };
    case 'tick':
      return confirmOld(m, at);
    default:
      return unreachable(o, 'observation');
  }
}

/** The next model; `health.since` moves only when state or reason changes. */
export function observeHealth(m: HealthModel, o: HealthObservation, at: number): HealthModel {
  const next = reduce(m, o, at);
  const judged = judge(next);
  if (judged.state === m.health.state && judged.reason === m.health.reason) return { ...next, health: m.health };
  return { ...next, health: { ...judged, since: at } };
}
