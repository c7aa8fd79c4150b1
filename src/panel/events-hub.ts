import { setTimeout as sleep } from 'node:timers/promises';
import type { ReloadRecord } from '../api/types.js';
import type { StatusRecord } from '../tunnel/status.js';
import type { DaemonClient } from './daemon-client.js';
import { connecting, connectionLost, type DaemonFailure } from './daemon-failure.js';
import { createSseReader, type SseEvent } from '../api/sse-reader.js';
import { unreachable } from '../kernel/unreachable.js';

/** The daemon's config state as its /health/details reports it (the problems in `error`, with line and column). */
export interface DaemonConfigHealth {
  valid: boolean;
  error: string | null;
  missing: boolean;
}

/** Whether the panel talks to the daemon; when not, why (a code the page translates, its values, and in English). */
export interface DaemonLink {
  reachable: boolean;
  code: string | null;
  params: Record<string, string>;
  message: string | null;
  where: string;
}

/** Everything the page needs to draw live state; sent whole on connect and after each reload. */
export interface Snapshot {
  daemon: DaemonLink;
  statuses: StatusRecord[];
  health: DaemonConfigHealth | null;
}

export type HubMessage =
  | { event: 'snapshot'; data: Snapshot }
  | { event: 'status'; data: StatusRecord }
  | { event: 'reload'; data: ReloadRecord };

type Listener = (m: HubMessage) => void;

/** The page's view of the link: reachable (null failure), or why not. */
function link(where: string, failure: DaemonFailure | null): DaemonLink {
  if (failure === null) return { reachable: true, code: null, params: {}, message: null, where };
  const params = failure.reason === 'connection' ? failure.params : { detail: failure.code };
  return { reachable: false, code: failure.reason === 'connection' ? failure.code : 'daemon_error', params, message: failure.message, where };
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/**
 * One upstream connection to the daemon's /events, shared by every open page: the
 * number of browsers never multiplies the load on the daemon, and the daemon's token
 * stays in this process. The connection is opened with the first subscriber and
 * closed with the last; it reconnects with capped backoff while anyone listens.
 *
 *   idle ──subscribe──▶ running(abort) ──last unsubscribe / close──▶ idle
 */
export class EventsHub {
  readonly #client: DaemonClient;
  readonly #listeners = new Set<Listener>();
  #state: { id: 'idle' } | { id: 'running'; abort: AbortController; done: Promise<void> } = { id: 'idle' };
  #snapshot: Snapshot;

  constructor(client: DaemonClient) {
    this.#client = client;
    this.#snapshot = { daemon: link(client.where, connecting(client.where)), statuses: [], health: null };
  }

  /** Sends the current snapshot at once, then every change; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    listener({ event: 'snapshot', data: this.#snapshot });
    if (this.#state.id === 'idle') {
      const abort = new AbortController();
      this.#state = { id: 'running', abort, done: this.#run(abort.signal) };
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) void this.#stop();
    };
  }

  /** Ends the upstream connection and tells every subscriber nothing more comes. */
  async close(): Promise<void> {
    this.#listeners.clear();
    await this.#stop();
  }

  async #stop(): Promise<void> {
    const s = this.#state;
    switch (s.id) {
      case 'idle':
        return;
      case 'running':
        this.#state = { id: 'idle' };
        s.abort.abort();
        await s.done;
        return;
      default:
        return unreachable(s, 'state');
    }
  }

  #emit(m: HubMessage): void {
    for (const l of this.#listeners) l(m);
  }

  #setDaemon(failure: DaemonFailure): void {
    const d = this.#snapshot.daemon;
    const next = link(this.#client.where, failure);
    if (d.reachable === next.reachable && d.message === next.message) return;
    this.#snapshot = { ...this.#snapshot, daemon: next };
    this.#emit({ event: 'snapshot', data: this.#snapshot });
  }

  /** Reads the whole state; done once the stream is open, so no change falls between. */
  async #refresh(): Promise<void> {
    // /health/details, a control route: /health says only that the file has problems, not which.
    const [statuses, health] = await Promise.all([
      this.#client.get<StatusRecord[]>('/status'),
      this.#client.get<{ config?: DaemonConfigHealth }>('/health/details'),
    ]);
    const cfg = health.ok ? health.value.config : undefined;
    this.#snapshot = {
      daemon: link(this.#client.where, statuses.ok ? null : statuses.error),
      statuses: statuses.ok && Array.isArray(statuses.value) ? statuses.value : this.#snapshot.statuses,
      health: cfg ? { valid: cfg.valid === true, error: typeof cfg.error === 'string' ? cfg.error : null, missing: cfg.missing === true } : null,
    };
    this.#emit({ event: 'snapshot', data: this.#snapshot });
  }

  async #handle(ev: SseEvent): Promise<void> {
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (typeof data !== 'object' || data === null) return;
    const isReload = ev.event === 'reload' || (data as { type?: unknown }).type === 'reload';
    if (isReload) {
      this.#emit({ event: 'reload', data: data as ReloadRecord });
      await this.#refresh();
      return;
    }
    const rec = data as StatusRecord;
    if ((ev.event === 'status' || ev.event === 'message') && typeof rec.hash === 'string' && typeof rec.status === 'string') {
      const at = this.#snapshot.statuses.findIndex((s) => s.hash === rec.hash);
      const statuses = at < 0 ? [...this.#snapshot.statuses, rec] : this.#snapshot.statuses.map((s) => (s.hash === rec.hash ? rec : s));
      this.#snapshot = { ...this.#snapshot, statuses };
      this.#emit({ event: 'status', data: rec });
    }
  }

  async #run(signal: AbortSignal): Promise<void> {
    let delay = FIRST_RETRY_MS;
    while (!signal.aborted) {
      const opened = await this.#client.events(signal);
      if (opened.ok) {
        const reader = createSseReader();
        let open = false;
        try {
          for await (const chunk of opened.value) {
            for (const item of reader.push(chunk)) {
              // The daemon's first item, its `: connected` comment, says it has subscribed us.
              if (!open) {
                open = true;
                delay = FIRST_RETRY_MS;
                await this.#refresh();
              }
              if (item.kind === 'event') await this.#handle(item);
            }
          }
        } catch {
          // The stream broke (daemon stopped, or we aborted it): reconnect below unless aborted.
        }
        if (signal.aborted) return;
        this.#setDaemon(connectionLost(this.#client.where));
      } else {
        if (signal.aborted) return;
        this.#setDaemon(opened.error);
      }
      try {
        await sleep(delay + Math.floor(Math.random() * 100), undefined, { signal });
      } catch {
        return;
      }
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }
}
