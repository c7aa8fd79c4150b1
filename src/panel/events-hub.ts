import { setTimeout as sleep } from 'node:timers/promises';
import type { ReloadRecord } from '../api/types.js';
import type { StatusRecord } from '../tunnel/status.js';
import type { DaemonClient } from './daemon-client.js';
import { createSseReader, type SseEvent } from '../api/sse-reader.js';
import { unreachable } from '../unreachable.js';

/** The daemon's config state as its /health reports it. */
export interface DaemonConfigHealth {
  valid: boolean;
  error: string | null;
  missing: boolean;
}

/** Everything the page needs to draw live state; sent whole on connect and after each reload. */
export interface Snapshot {
  daemon: { reachable: boolean; message: string | null; where: string };
  statuses: StatusRecord[];
  health: DaemonConfigHealth | null;
}

export type HubMessage =
  | { event: 'snapshot'; data: Snapshot }
  | { event: 'status'; data: StatusRecord }
  | { event: 'reload'; data: ReloadRecord };

type Listener = (m: HubMessage) => void;

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
    this.#snapshot = { daemon: { reachable: false, message: 'connecting to the daemon', where: client.where }, statuses: [], health: null };
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

  #setDaemon(reachable: boolean, message: string | null): void {
    const d = this.#snapshot.daemon;
    if (d.reachable === reachable && d.message === message) return;
    this.#snapshot = { ...this.#snapshot, daemon: { ...d, reachable, message } };
    this.#emit({ event: 'snapshot', data: this.#snapshot });
  }

  /** Reads the whole state; done once the stream is open, so no change falls between. */
  async #refresh(): Promise<void> {
    const [statuses, health] = await Promise.all([
      this.#client.get<StatusRecord[]>('/status'),
      this.#client.get<{ config?: DaemonConfigHealth }>('/health'),
    ]);
    const cfg = health.ok ? health.value.config : undefined;
    this.#snapshot = {
      daemon: statuses.ok
        ? { reachable: true, message: null, where: this.#client.where }
        : { reachable: false, message: statuses.error.message, where: this.#client.where },
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
        this.#setDaemon(false, `lost the connection to the daemon at ${this.#client.where}; reconnecting`);
      } else {
        if (signal.aborted) return;
        this.#setDaemon(false, opened.error.message);
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
