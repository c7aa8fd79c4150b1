import http from 'node:http';
import https from 'node:https';
import { err, ok, type Result } from '../kernel/result.js';
import { createSseReader, type SseItem } from '../api/sse-reader.js';
import { describeTarget, type Target } from './target.js';
import { trustedConnection } from '../edge/trusted-connect.js';

/**
 * How a connection to the daemon is made: only to a server the user owns, checked
 * before a byte is sent (SPEC §6). A TLS URL is left to its certificate.
 */
export function connectionFor(target: Target): http.RequestOptions['createConnection'] | undefined {
  if (target.kind === 'url' && target.url.protocol === 'https:') return undefined;
  return trustedConnection(process.getuid?.() ?? 0, target.kind === 'socket' && target.named === true) as unknown as http.RequestOptions['createConnection'];
}

/** A daemon answer: status and the body exactly as sent. */
export interface ApiResponse {
  status: number;
  body: string;
}

/** The daemon could not be reached at all (exit code 3). */
export interface Unreachable {
  reason: 'unreachable';
  message: string;
}

function requestOptions(target: Target, method: string, path: string): { mod: typeof http; options: http.RequestOptions } {
  if (target.kind === 'socket') {
    return { mod: http, options: { socketPath: target.path, path, method, headers: { host: 'localhost' }, createConnection: connectionFor(target) } };
  }
  const base = target.url.href.endsWith('/') ? target.url.href : `${target.url.href}/`;
  const url = new URL(path.replace(/^\//, ''), base);
  const headers: Record<string, string> = {};
  if (target.token !== null) headers.authorization = `Bearer ${target.token}`;
  return { mod: url.protocol === 'https:' ? (https as unknown as typeof http) : http, options: { method, headers, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port || undefined, path: url.pathname + url.search, ...(url.protocol === 'https:' ? {} : { createConnection: connectionFor(target) }) } };
}

function unreachable(target: Target, e: NodeJS.ErrnoException): Unreachable {
  // A server the user does not own: the message says whose it is and what to do; nothing was sent.
  if (e.code === 'EUNTRUSTED') return { reason: 'unreachable', message: `refusing to talk to the daemon at ${describeTarget(target)}: ${e.message}` };
  const where = describeTarget(target);
  const how = target.kind === 'socket'
    ? 'is the daemon running? Start it with `tunnel-manager`, or pass --socket PATH / --url URL'
    : 'is the daemon running and listening there? Start it with `tunnel-manager`, or check --url';
  const why: Record<string, string> = {
    ENOENT: 'no such socket',
    ECONNREFUSED: 'connection refused',
    EACCES: 'permission denied (the socket belongs to another user)',
    ENOTFOUND: 'unknown host',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'timed out',
    EHOSTUNREACH: 'host unreachable',
  };
  return { reason: 'unreachable', message: `cannot reach the daemon at ${where}: ${why[e.code ?? ''] ?? e.message}; ${how}` };
}

/** One request; resolves with the answer whatever its status, or Unreachable. */
export function call(target: Target, method: string, path: string, timeoutMs = 60_000): Promise<Result<ApiResponse, Unreachable>> {
  const { mod, options } = requestOptions(target, method, path);
  return new Promise((resolve) => {
    const req = mod.request({ ...options, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(ok({ status: res.statusCode ?? 0, body })));
      res.on('error', (e) => resolve(err(unreachable(target, e))));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`), { code: 'ETIMEDOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(err(unreachable(target, e))));
    req.end();
  });
}

/** An open GET /events stream. */
export interface EventStream {
  /** Called for every item, in order; `onEnd` when the daemon closes the stream. */
  on(handlers: { item: (i: SseItem) => void; end: () => void }): void;
  close(): void;
}

/**
 * Opens GET /events and resolves once the daemon's first item (its `: connected`
 * comment) arrived, so that a change made afterwards is sure to be reported.
 */
export function openEvents(target: Target, timeoutMs = 10_000): Promise<Result<EventStream, Unreachable | ApiResponse>> {
  const { mod, options } = requestOptions(target, 'GET', '/events');
  return new Promise((resolve) => {
    const req = mod.request({ ...options, headers: { ...options.headers, accept: 'text/event-stream' } });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`), { code: 'ETIMEDOUT' })), timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err(unreachable(target, e)));
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (d: string) => (body += d));
        res.on('end', () => {
          clearTimeout(timer);
          resolve(err({ status: res.statusCode ?? 0, body }));
        });
        return;
      }
      const reader = createSseReader();
      let pending: SseItem[] = [];
      let handlers: { item: (i: SseItem) => void; end: () => void } | null = null;
      let ended = false;
      res.on('data', (d: Buffer) => {
        const items = reader.push(d);
        if (items.length === 0) return;
        if (handlers) for (const i of items) handlers.item(i);
        else pending.push(...items);
        clearTimeout(timer);
        resolve(ok(stream));
      });
      res.on('close', () => {
        ended = true;
        clearTimeout(timer);
        resolve(err({ reason: 'unreachable', message: `the daemon at ${describeTarget(target)} closed the event stream` }));
        handlers?.end();
      });
      const stream: EventStream = {
        on(h) {
          handlers = h;
          for (const i of pending) h.item(i);
          pending = [];
          if (ended) h.end();
        },
        close() {
          handlers = null;
          req.destroy();
        },
      };
    });
    req.end();
  });
}
