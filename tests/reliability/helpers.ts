// What the reliability suite adds to the end-to-end harness: a recorder of the
// daemon's /events stream (so that every state a tunnel went through is seen, not
// only the ones a poll happens to catch), config text builders, waits with a
// deadline that name what they waited for, and readers of /proc and sshd's log.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createSseReader } from '../../src/api/sse-reader.js';
import type { Daemon } from '../e2e/daemon-harness.js';

export { echoServer, port, roundTrip, sshChildren, sshd, startDaemon, MAIN, CLI, REPO } from '../e2e/daemon-harness.js';
export type { Daemon, Sshd } from '../e2e/daemon-harness.js';

export interface TunnelFields {
  remote_host: string;
  remote_port: string | number;
  local_port: string | number;
  direction: 'local_to_remote' | 'remote_to_local';
  ssh_options?: Record<string, string | number>;
}

/** One `tunnels:` entry, values JSON-quoted (valid YAML). */
export function tunnelYaml(name: string, t: TunnelFields): string {
  let out = `  - name: ${JSON.stringify(name)}\n`;
  for (const key of ['remote_host', 'remote_port', 'local_port', 'direction'] as const) {
    const v = t[key];
    out += `    ${key}: ${typeof v === 'number' ? v : JSON.stringify(v)}\n`;
  }
  if (t.ssh_options) {
    out += '    ssh_options:\n';
    for (const [k, v] of Object.entries(t.ssh_options)) out += `      ${k}: ${typeof v === 'number' ? v : JSON.stringify(v)}\n`;
  }
  return out;
}

export function configYaml(tunnels: Record<string, TunnelFields>): string {
  return 'tunnels:\n' + Object.entries(tunnels).map(([n, t]) => tunnelYaml(n, t)).join('');
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined/false, or throws naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(everyMs);
  }
}

export async function statusOf(d: Daemon, name: string): Promise<any> {
  const all = await d.json<any[]>('/status');
  const t = all.find((x) => x.name === name);
  if (!t) throw new Error(`no tunnel named ${name} in /status: ${JSON.stringify(all.map((x) => x.name))}`);
  return t;
}

export interface Recorded {
  /** Milliseconds since the epoch when the event arrived. */
  at: number;
  data: any;
}

/**
 * Subscribes to /events and keeps every record with its arrival time. The stream
 * gives each state change as it happens, so a RETRYING that lasted 50 ms is seen.
 */
export async function recordEvents(d: Daemon, headers: Record<string, string> = {}): Promise<{
  events: Recorded[];
  /** Status records of one tunnel (by name), in order. */
  statuses(name: string): Recorded[];
  reloads(): Recorded[];
  close(): void;
}> {
  const events: Recorded[] = [];
  const ctrl = new AbortController();
  const res = await d.api('/events', { signal: ctrl.signal, headers });
  if (!res.ok || !res.body) throw new Error(`/events answered ${res.status}`);
  const reader = res.body.getReader();
  const sse = createSseReader();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const item of sse.push(value)) {
          if (item.kind !== 'event') continue;
          try {
            events.push({ at: Date.now(), data: JSON.parse(item.data) });
          } catch {
            events.push({ at: Date.now(), data: { unparsed: item.data } });
          }
        }
      }
    } catch {
      // Aborted by close(), or the daemon went away.
    }
  })();
  return {
    events,
    statuses: (name) => events.filter((e) => e.data && e.data.type !== 'reload' && e.data.name === name && typeof e.data.status === 'string'),
    reloads: () => events.filter((e) => e.data?.type === 'reload'),
    close: () => ctrl.abort(),
  };
}

/** argv of a live process, from /proc (null when it is gone). */
export function argvOf(pid: number): string[] | null {
  try {
    const parts = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (parts[parts.length - 1] === '') parts.pop();
    return parts;
  } catch {
    return null;
  }
}

/** True while the process runs (a zombie, whose parent has not reaped it yet, counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z /s.test(stat);
  } catch {
    return false;
  }
}

/** An HTTP request over a unix socket (Node's fetch cannot reach one). */
export function socketRequest(socketPath: string, method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Direct children of `pid`. */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Open file descriptors of a process. */
export function fdCount(pid: number): number {
  return execFileSync('ls', [`/proc/${pid}/fd`], { encoding: 'utf8' }).split('\n').filter(Boolean).length;
}

/** TCP connections sshd accepted, from its VERBOSE log ("Connection from … port …"). */
export function loginAttempts(sshdLog: string): number {
  return (sshdLog.match(/^Connection from \S+ port \d+ on /gm) ?? []).length;
}

/** Logins sshd turned away after the client offered its key(s) (VERBOSE log). */
export function authRejections(sshdLog: string): number {
  return (sshdLog.match(/^Connection closed by authenticating user /gm) ?? []).length;
}

/** A TCP server that holds a port and answers `reply` to anything (a stand-in for another program). */
export async function holdPort(p: number, host = '127.0.0.1', reply = 'other'): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.on('data', () => s.end(reply));
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(p, host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}

/** A TCP echo server on host:port (the e2e harness's echo binds 127.0.0.1 only). */
export async function echoOn(p: number, host: string): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(p, host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}

/** Upper bound for ssh to notice a silent server: ServerAliveInterval × (CountMax + 1), plus a margin for a busy machine. */
export function detectionBoundMs(interval: number, countMax: number, marginMs = 6_000): number {
  return interval * (countMax + 1) * 1000 + marginMs;
}

/** SPEC §5: once a fault ends the tunnel carries data again within 5 s; the margin is for two busy cores. */
export const RECOVERY_BOUND_MS = 5_000 + 6_000;
/** SPEC §5: an ssh that died unexpectedly is restarted within 1 s. */
export const RESTART_BOUND_MS = 1_000 + 5_000;

/**
 * Waits for the tunnel to be RUNNING with a pid other than `oldPid`, and checks at
 * that very moment that data flows through `check`. Returns the status record and
 * how long it took from `sinceMs`.
 */
export async function runningAgain(d: Daemon, name: string, opts: { oldPid?: number | null; sinceMs: number; timeoutMs: number; check: () => Promise<unknown> }): Promise<{ record: any; tookMs: number }> {
  const record = await until(`${name} RUNNING again`, async () => {
    const t = await statusOf(d, name);
    return t.status === 'RUNNING' && (opts.oldPid == null || t.pid !== opts.oldPid) ? t : undefined;
  }, opts.timeoutMs, 25);
  const tookMs = Date.now() - opts.sinceMs;
  // The state said RUNNING: data must flow now, not after some more retries.
  await opts.check();
  return { record, tookMs };
}
