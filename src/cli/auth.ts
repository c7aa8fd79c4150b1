// `tunnel-cli auth <hash>`: the user's terminal on an interactive tunnel's login
// (SPEC §13), over the daemon's /auth/<hash> WebSocket. The daemon starts the tunnel
// if it is stopped. Ctrl-C detaches (the login goes on and can be resumed); every
// other key goes to ssh.
import { setTimeout as sleep } from 'node:timers/promises';
import type http from 'node:http';
import WebSocket from 'ws';
import { connectionFor } from './client.js';
import { errorBodySchema, terminalServerMessageSchema } from '../api/schemas.js';
import type { TerminalClientMessage } from '../api/types.js';
import { EXIT } from './context.js';
import { describeTarget, type Target } from './target.js';
import { unreachable } from '../kernel/unreachable.js';

/** Ctrl-C: leaves the terminal; a password prompt needs no interrupt key. */
export const DETACH_KEY = '\x03';

/** The user's terminal, passed in by main. */
export interface TerminalIo {
  input: NodeJS.ReadableStream;
  output(data: Buffer): void;
  /** One line for the user (stderr). */
  say(text: string): void;
  /** Raw mode on a terminal (each key at once, no local echo); false when stdin is not one. */
  setRaw(raw: boolean): boolean;
  size(): { cols: number; rows: number } | null;
  onResize(listener: () => void): () => void;
}

/** The WebSocket URL of a tunnel's login terminal, and the headers it needs (the token over HTTP). */
export function terminalUrl(target: Target, hash: string): { url: string; headers: Record<string, string>; createConnection?: http.RequestOptions['createConnection'] } {
  const path = `/auth/${encodeURIComponent(hash)}`;
  const connect = connectionFor(target);
  const how = connect === undefined ? {} : { createConnection: connect };
  if (target.kind === 'socket') return { url: `ws+unix://${target.path}:${path}`, headers: {}, ...how };
  const base = new URL(target.url.href.endsWith('/') ? target.url.href : `${target.url.href}/`);
  base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = new URL(path.replace(/^\//, ''), base);
  return { url: url.href, headers: target.token !== null ? { authorization: `Bearer ${target.token}` } : {}, ...how };
}

export function errorMessage(status: number, body: string): { code: string; message: string } {
  const e = errorBodySchema.safeParse(parseJson(body));
  if (e.success) return { code: e.data.error.code, message: e.data.error.message };
  // Not the daemon's JSON: shown as it came.
  return { code: 'http', message: `the daemon answered ${status}${body ? `: ${body.slice(0, 200)}` : ''}` };
}

/** The daemon's refusal of a terminal (an HTTP answer instead of the upgrade), read whole: its status and error. */
export function onRefused(ws: WebSocket, then: (status: number, e: { code: string; message: string }) => void): void {
  ws.on('unexpected-response', (_req, res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (body += d));
    res.on('end', () => then(res.statusCode ?? 0, errorMessage(res.statusCode ?? 0, body)));
  });
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Attaches, and resolves with the exit code once the login ended, failed, or the user detached. */
export async function runAuth(hash: string, target: Target, io: TerminalIo, loadingWaitMs = 30_000): Promise<number> {
  // A daemon that has just started answers `loading` until it has read its config file.
  const deadline = Date.now() + loadingWaitMs;
  for (;;) {
    const r = await attachOnce(hash, target, io, Date.now() < deadline);
    if (r !== 'loading') return r;
    await sleep(LOADING_POLL_MS);
  }
}

const LOADING_POLL_MS = 200;

/** One attempt; 'loading' (nothing said) when the daemon is still loading and `mayWait`. */
function attachOnce(hash: string, target: Target, io: TerminalIo, mayWait: boolean): Promise<number | 'loading'> {
  const { url, headers, createConnection } = terminalUrl(target, hash);
  // In raw mode a bare \n does not return to the first column.
  let raw = false;
  const say = (text: string) => io.say(raw ? `\r\n${text}\r\n` : `${text}\n`);

  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, maxPayload: 1024 * 1024, ...(createConnection === undefined ? {} : { createConnection: createConnection as never }) });
    let settled = false;
    const cleanups: (() => void)[] = [];
    const finish = (code: number | 'loading', text: string | null) => {
      if (settled) return;
      settled = true;
      for (const c of cleanups.splice(0)) c();
      if (text !== null) say(text);
      if (raw) io.setRaw(false);
      raw = false;
      ws.close();
      resolve(code);
    };

    onRefused(ws, (status, e) => {
      if (e.code === 'loading' && mayWait) return finish('loading', null);
      if (e.code === 'already_running') return finish(EXIT.ok, `tunnel-cli: ${e.message}`);
      const hint = status === 401 ? ' (pass --token or set TUNNEL_API_TOKEN)' : '';
      finish(EXIT.failed, `tunnel-cli: ${e.message}${hint}`);
    });
    ws.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EUNTRUSTED') return finish(EXIT.unreachable, `tunnel-cli: refusing to talk to the daemon at ${describeTarget(target)}: ${e.message}`);
      const why = e.code === 'ENOENT' ? 'no such socket' : e.code === 'ECONNREFUSED' ? 'connection refused' : e.message;
      finish(EXIT.unreachable, `tunnel-cli: cannot reach the daemon at ${describeTarget(target)}: ${why}; is the daemon running?`);
    });

    const sendSize = () => {
      const s = io.size();
      if (s !== null && ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'resize', ...s } satisfies TerminalClientMessage));
    };

    ws.on('open', () => {
      const onKeys = (chunk: Buffer | string) => {
        const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
        const at = text.indexOf(DETACH_KEY);
        const before = at === -1 ? text : text.slice(0, at);
        if (before !== '') ws.send(Buffer.from(before, 'utf8'));
        if (at !== -1) finish(EXIT.failed, `tunnel-cli: detached; the login still waits: run tunnel-cli auth ${hash} to go on`);
      };
      io.input.on('data', onKeys);
      io.input.resume();
      cleanups.push(() => {
        io.input.off('data', onKeys);
        io.input.pause();
      });
      cleanups.push(io.onResize(sendSize));
      sendSize();
    });

    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        io.output(bytes);
        return;
      }
      const parsed = terminalServerMessageSchema.safeParse(parseJson(bytes.toString('utf8')));
      if (!parsed.success) {
        return finish(EXIT.failed, `tunnel-cli: a message from the daemon is not what this tunnel-cli expects: ${JSON.stringify(bytes.toString('utf8').slice(0, 200))}`);
      }
      const m = parsed.data;
      switch (m.type) {
        case 'attached': {
          const others = m.shared_with ?? [];
          const shared = others.length > 0 ? `, shared with ${others.join(', ')}` : '';
          say(`tunnel-cli: attached to the login of ${m.name} (${m.hash.slice(0, 8)})${shared}; answer ssh's prompts, Ctrl-C detaches`);
          raw = io.setRaw(true);
          return;
        }
        case 'end':
          switch (m.status) {
            case 'RUNNING':
              return finish(EXIT.ok, `tunnel-cli: logged in; the tunnel is RUNNING`);
            case 'FAILED':
              return finish(EXIT.failed, `tunnel-cli: the login failed: ${m.message ?? 'no reason given'}`);
            case 'STOPPED':
              return finish(EXIT.failed, `tunnel-cli: the tunnel was stopped during the login`);
            case 'AUTH_REQUIRED':
              return finish(EXIT.failed, `tunnel-cli: the login failed: ${m.message ?? 'ssh exited'}; run tunnel-cli auth ${hash} to try again`);
            default:
              return unreachable(m.status);
          }
        default:
          return unreachable(m, 'terminal message');
      }
    });
    ws.on('close', () => finish(EXIT.failed, 'tunnel-cli: the daemon closed the terminal before the login ended'));
  });
}
