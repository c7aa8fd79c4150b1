// An in-memory EngineApi for the API and CLI tests: tunnels move between states on
// start/stop the way the real supervisor reports them, without ssh.
import type { ConfigHealth, EngineApi } from '../../../src/api/engine-api.js';
import type { ReloadRecord } from '../../../src/api/types.js';
import type { SupervisorApi, SupervisorEvent } from '../../../src/supervisor/types.js';
import { parseEndpoint } from '../../../src/tunnel/endpoint.js';
import { tunnelHash } from '../../../src/tunnel/hash.js';
import type { Direction, TunnelSpec } from '../../../src/tunnel/spec.js';
import type { StatusRecord, TunnelState } from '../../../src/tunnel/status.js';

export interface Entry {
  name?: string;
  remote_host: string;
  remote_port: string | number;
  local_port: string | number;
  direction: Direction;
  interactive?: boolean;
  [key: string]: unknown;
}

export function spec(e: Entry, line = 1): TunnelSpec {
  const rp = String(e.remote_port);
  const lp = String(e.local_port);
  const remote = parseEndpoint(rp);
  const local = parseEndpoint(lp);
  if (!remote.ok || !local.ok) throw new Error(`bad endpoint in ${JSON.stringify(e)}`);
  const name = e.name ?? 'unnamed';
  const interactive = e.interactive ?? false;
  return {
    hash: tunnelHash({ name, remote_host: e.remote_host, remote_port: rp, local_port: lp, direction: e.direction, interactive: String(interactive) }),
    name,
    remote_host: e.remote_host,
    remote_port: remote.value,
    local_port: local.value,
    direction: e.direction,
    interactive,
    ssh_options: {},
    written: { ...e },
    line,
  };
}

/** What `start` leads to for a tunnel, after `delayMs`. */
export type Outcome = { state: 'RUNNING' } | { state: 'FAILED' | 'RETRYING'; error: string };

export class FakeEngine implements EngineApi {
  private specs: TunnelSpec[];
  private records = new Map<string, StatusRecord>();
  private listeners = new Set<(e: SupervisorEvent) => void>();
  private reloadListeners = new Set<(r: ReloadRecord) => void>();
  private logLines = new Map<string, string[]>();
  private logTimes = new Map<string, string>();
  private timers = new Set<NodeJS.Timeout>();
  outcomes = new Map<string, Outcome>();
  delayMs = 30;
  health: ConfigHealth = { path: '/etc/tunnels/config.yaml', valid: true, applied: 'all', error: null, problems: [], rejected: [], held: [], missing: false, warnings: [], exposure: [], loaded_at: '2024-01-01T00:00:00.000Z' };
  nextReload: Partial<ReloadRecord> | null = null;
  /** Makes every supervisor call throw, to exercise the 500 path. */
  broken = false;
  private nextPid = 4000;

  constructor(entries: Entry[], private readonly clock: () => Date = () => new Date()) {
    this.specs = entries.map((e, i) => spec(e, i + 2));
    for (const s of this.specs) this.records.set(s.hash, this.initial(s));
  }

  private initial(s: TunnelSpec): StatusRecord {
    return {
      hash: s.hash,
      name: s.name,
      remote_host: s.remote_host,
      remote_port: s.remote_port.text,
      local_port: s.local_port.text,
      direction: s.direction,
      status: 'STOPPED',
      pid: null,
      since: this.clock().toISOString(),
      restarts: 0,
      last_exit: null,
      last_error: null,
      next_retry_at: null,
      health: { state: 'unknown', reason: 'the forward is not established', since: this.clock().toISOString() },
      connection: null,
    };
  }

  private set(hash: string, state: TunnelState, patch: Partial<StatusRecord> = {}): StatusRecord {
    const old = this.records.get(hash);
    if (!old) throw new Error(`unknown hash ${hash}`);
    const since = this.clock().toISOString();
    const health: StatusRecord['health'] = state === 'RUNNING' ? { state: 'ok', reason: null, since } : { state: 'unknown', reason: 'the forward is not established', since };
    const rec: StatusRecord = { ...old, health, ...patch, status: state, since };
    this.records.set(hash, rec);
    for (const l of this.listeners) l({ type: 'status', record: rec });
    return rec;
  }

  private guard(): void {
    if (this.broken) throw new Error('supervisor exploded at /secret/path');
  }

  supervisor: SupervisorApi = {
    apply: async () => ({ added: [], removed: [], unchanged: this.specs.map((s) => s.hash) }),
    statuses: () => {
      this.guard();
      return this.specs.map((s) => this.records.get(s.hash) as StatusRecord);
    },
    status: (hash) => this.records.get(hash),
    tunnels: () => [...this.specs],
    attach: async () => ({ ok: false, error: { reason: 'not_interactive', message: 'the fake engine has no terminals' } }),
    start: async (hash) => {
      this.guard();
      const rec = this.set(hash, 'STARTING', { pid: this.nextPid++, last_error: null, next_retry_at: null });
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (this.records.get(hash)?.status !== 'STARTING') return;
        const o = this.outcomes.get(hash) ?? { state: 'RUNNING' };
        this.log(hash, `start attempt: ${o.state}`);
        if (o.state === 'RUNNING') this.set(hash, 'RUNNING');
        else if (o.state === 'FAILED') this.set(hash, 'FAILED', { pid: null, last_error: o.error, last_exit: { code: 255, signal: null, at: this.clock().toISOString() } });
        else this.set(hash, 'RETRYING', { pid: null, last_error: o.error, restarts: rec.restarts + 1, next_retry_at: new Date(this.clock().getTime() + 2000).toISOString() });
      }, this.delayMs);
      this.timers.add(t);
      return rec;
    },
    stop: async (hash) => {
      this.guard();
      if (this.records.get(hash)?.status === 'STOPPED') return this.records.get(hash) as StatusRecord;
      return this.set(hash, 'STOPPED', { pid: null, next_retry_at: null });
    },
    restart: async (hash) => {
      await this.supervisor.stop(hash);
      return this.supervisor.start(hash);
    },
    startAll: async () => {
      this.guard();
      for (const s of this.specs) if (!s.interactive) await this.supervisor.start(s.hash);
      return this.supervisor.statuses();
    },
    stopAll: async () => {
      this.guard();
      for (const s of this.specs) await this.supervisor.stop(s.hash);
      return this.supervisor.statuses();
    },
    logs: (hash) => this.logLines.get(hash) ?? (this.records.has(hash) ? [] : undefined),
    logsModified: (hash) => this.logTimes.get(hash) ?? null,
    subscribe: (l) => {
      this.listeners.add(l);
      return () => this.listeners.delete(l);
    },
    shutdown: async () => this.close(),
  };

  log(hash: string, line: string): void {
    const lines = this.logLines.get(hash) ?? [];
    lines.push(line);
    this.logLines.set(hash, lines);
    this.logTimes.set(hash, this.clock().toISOString());
  }

  listenerCount(): number {
    return this.listeners.size;
  }

  tunnels(): TunnelSpec[] {
    return this.specs;
  }

  configHealth(): ConfigHealth {
    return this.health;
  }

  /** Replaces the config in force (as a valid reload would). */
  setTunnels(entries: Entry[]): void {
    this.specs = entries.map((e, i) => spec(e, i + 2));
    for (const s of this.specs) if (!this.records.has(s.hash)) this.records.set(s.hash, this.initial(s));
    for (const h of [...this.records.keys()]) if (!this.specs.some((s) => s.hash === h)) this.records.delete(h);
  }

  async reload(): Promise<ReloadRecord> {
    const r: ReloadRecord = {
      type: 'reload',
      at: this.clock().toISOString(),
      ok: this.health.valid,
      error: this.health.error,
      added: [],
      removed: [],
      unchanged: this.specs.map((s) => s.hash),
      changed: [],
      left_out: 0,
      ...this.nextReload,
    };
    for (const l of this.reloadListeners) l(r);
    return r;
  }

  subscribeReloads(l: (r: ReloadRecord) => void): () => void {
    this.reloadListeners.add(l);
    return () => this.reloadListeners.delete(l);
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/** Three tunnels, one with ip:port values written as strings and one interactive. */
export const SAMPLE: Entry[] = [
  { name: 'db', remote_host: 'user@bastion', remote_port: 5432, local_port: '127.0.0.1:15432', direction: 'remote_to_local' },
  { name: 'web', remote_host: 'edge', remote_port: '0.0.0.0:8081', local_port: 3000, direction: 'local_to_remote', comment_key: 'kept' },
  { remote_host: 'jump', remote_port: 22, local_port: 2222, direction: 'remote_to_local', interactive: true },
];
