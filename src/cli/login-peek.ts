// Whether an interactive tunnel's login waits for a person. AUTH_REQUIRED says its ssh
// runs in the daemon's terminal, not that it shows a prompt: a key without passphrase
// (or one an agent holds) logs in by itself. So before `start-tunnel` tells the user
// to run `tunnel-cli auth`, it looks at the login's terminal as `auth` would, without
// typing anything: a prompt on it means a person is needed; a login that ends by
// itself means none was. It then lets go (the login goes on, as after Ctrl-C in auth).
import WebSocket from 'ws';
import { terminalServerMessageSchema } from '../api/schemas.js';
import { onRefused, parseJson, terminalUrl } from './auth.js';
import type { Target } from './target.js';

export type Peek =
  /** ssh shows something for a person to answer (a prompt, or a banner before it). */
  | { kind: 'prompt' }
  /** Another terminal is attached: a person is at it. */
  | { kind: 'busy' }
  /** The login is over without anyone typing: RUNNING (or already was), or it ended otherwise. */
  | { kind: 'ended'; status: 'RUNNING' | 'FAILED' | 'STOPPED' | 'AUTH_REQUIRED'; message: string | null }
  /** Nothing shown and nothing ended before the deadline: ssh is still on its way. */
  | { kind: 'quiet' }
  /** The terminal could not be opened, or the daemon answered something unexpected. */
  | { kind: 'error'; message: string };

/** Looks at the login of `hash` for at most `timeoutMs`. */
export function peekLogin(target: Target, hash: string, timeoutMs: number): Promise<Peek> {
  const { url, headers, createConnection } = terminalUrl(target, hash);
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, maxPayload: 1024 * 1024, ...(createConnection === undefined ? {} : { createConnection: createConnection as never }) });
    let attached = false;
    let settled = false;
    const done = (p: Peek) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.close();
      resolve(p);
    };
    const timer = setTimeout(() => done({ kind: 'quiet' }), timeoutMs);
    onRefused(ws, (_status, e) => {
      if (e.code === 'already_running') return done({ kind: 'ended', status: 'RUNNING', message: null });
      if (e.code === 'terminal_busy') return done({ kind: 'busy' });
      done({ kind: 'error', message: e.message });
    });
    ws.on('error', (e) => done({ kind: 'error', message: e.message }));
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      // ssh's debug lines go to a file of their own: what its terminal shows is for a person.
      if (isBinary) {
        if (attached && bytes.toString('utf8').trim() !== '') done({ kind: 'prompt' });
        return;
      }
      const m = terminalServerMessageSchema.safeParse(parseJson(bytes.toString('utf8')));
      if (!m.success) return done({ kind: 'error', message: `a message from the daemon is not what this tunnel-cli expects: ${JSON.stringify(bytes.toString('utf8').slice(0, 200))}` });
      if (m.data.type === 'attached') attached = true;
      else done({ kind: 'ended', status: m.data.status, message: m.data.message });
    });
    ws.on('close', () => done({ kind: 'error', message: 'the daemon closed the login terminal' }));
  });
}
