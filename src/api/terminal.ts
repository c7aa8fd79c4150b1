// GET /auth/<hash> as a WebSocket: a person's terminal bridged to an interactive
// tunnel's ssh (SPEC §13). Guarded like the control routes (the bearer token on TCP,
// nothing on the 0600 socket); a browser never talks to it directly (it goes through
// the panel), so a request that carries an Origin is refused: no web page can type
// into a login.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { EngineApi } from './engine-api.js';
import type { Attachment, LoginOutcome, TerminalSink } from '../supervisor/types.js';
import { bearerCheck } from './auth.js';
import { apiError } from './errors.js';
import { resolveHash } from './resolve.js';
import { TERMINAL_MAX_FRAME, type TerminalServerMessage } from './types.js';

export interface TerminalRoute {
  /** For the HTTP server's 'upgrade' event. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every attached terminal (the logins go on until the supervisor stops them). */
  close(): void;
}

const PATH = /^\/auth\/([^/?#]+)$/;
const CLOSE_DONE = 1000;
const CLOSE_POLICY = 1008;

/** Writes a Response (an API error) on a socket that was never upgraded. */
async function refuse(socket: Duplex, res: Response): Promise<void> {
  const body = await res.text();
  const head = [`HTTP/1.1 ${res.status} ${res.statusText || 'Error'}`, 'connection: close', `content-length: ${Buffer.byteLength(body)}`];
  res.headers.forEach((v, k) => head.push(`${k}: ${v}`));
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}


const send = (ws: WebSocket, m: TerminalServerMessage) => {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
};

/** A resize message, or null for anything else (refused). */
function parseResize(text: string): { cols: number; rows: number } | null {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  const r = m as { type?: unknown; cols?: unknown; rows?: unknown };
  const dim = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 1000;
  return r?.type === 'resize' && dim(r.cols) && dim(r.rows) ? { cols: r.cols as number, rows: r.rows as number } : null;
}

export function createTerminalRoute(opts: { engine: EngineApi; tokens: readonly string[] | null; log: (e: Record<string, unknown>) => void }): TerminalRoute {
  const { engine, log } = opts;
  const wss = new WebSocketServer({ noServer: true, maxPayload: TERMINAL_MAX_FRAME });
  const bearerOk = opts.tokens !== null && opts.tokens.length > 0 ? bearerCheck(opts.tokens) : null;

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://daemon').pathname;
    const m = PATH.exec(path);
    if (m === null) return refuse(socket, apiError('not_found', `no WebSocket route ${path.slice(0, 200)}: terminals are at /auth/<hash>`));
    if (req.headers.origin !== undefined) {
      return refuse(socket, apiError('foreign_origin', 'the daemon does not take terminals from web pages: open the terminal in the panel'));
    }
    if (bearerOk !== null && !bearerOk(req.headers.authorization)) {
      return refuse(socket, apiError('unauthorized', 'this API needs "Authorization: Bearer <token>" (a token from TUNNEL_API_TOKEN)'));
    }
    const hash = resolveHash(engine, decodeURIComponent(m[1] as string), true);
    if (!hash.ok) return refuse(socket, hash.error);
    const spec = engine.tunnels().find((t) => t.hash === hash.value);
    if (spec === undefined) return refuse(socket, apiError('tunnel_not_found', `no tunnel ${hash.value} in the config in force`));

    // Output may arrive before the upgrade completes: held until the socket is there.
    let ws: WebSocket | null = null;
    const early: string[] = [];
    let ended: LoginOutcome | null = null;
    const finish = (outcome: LoginOutcome) => {
      if (ws === null) {
        ended = outcome;
        return;
      }
      send(ws, { type: 'end', status: outcome.status, message: outcome.message });
      ws.close(CLOSE_DONE, outcome.status);
    };
    const sink: TerminalSink = {
      output: (text) => (ws === null ? early.push(text) : ws.send(Buffer.from(text, 'utf8'))),
      end: finish,
    };
    const attached = await engine.supervisor.attach(hash.value, sink);
    if (!attached.ok) {
      const r = attached.error;
      const code = r.reason === 'busy' ? 'terminal_busy' : r.reason === 'running' ? 'already_running' : 'not_interactive';
      return refuse(socket, apiError(code, r.message));
    }
    const attachment: Attachment = attached.value;
    if (socket.destroyed) {
      attachment.detach();
      return;
    }
    wss.handleUpgrade(req, socket, head, (client) => {
      ws = client;
      log({ event: 'terminal_attached', hash: spec.hash, name: spec.name });
      send(client, { type: 'attached', hash: spec.hash, name: spec.name, shared_with: sharedWith(engine, spec.hash) });
      for (const text of early.splice(0)) client.send(Buffer.from(text, 'utf8'));
      if (ended !== null) finish(ended);
      client.on('message', (data: RawData, isBinary: boolean) => {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (isBinary) return attachment.input(bytes.toString('utf8'));
        const size = parseResize(bytes.toString('utf8'));
        if (size === null) {
          client.close(CLOSE_POLICY, 'expected {"type":"resize","cols":N,"rows":N} or binary input');
          return;
        }
        attachment.resize(size.cols, size.rows);
      });
      client.on('close', () => {
        // Closing the terminal lets go of it; the login goes on.
        attachment.detach();
        log({ event: 'terminal_detached', hash: spec.hash, name: spec.name });
      });
      client.on('error', () => attachment.detach());
    });
  }

  return {
    upgrade(req, socket, head) {
      socket.on('error', () => undefined);
      upgrade(req, socket, head).catch((e: unknown) => {
        log({ event: 'terminal_error', error: e instanceof Error ? e.message : String(e) });
        void refuse(socket, apiError('internal_error', 'internal error: see the daemon log'));
      });
    },
    close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}

/**
 * The other tunnels on the login a terminal attaches to: those on the same shared
 * connection (an interactive one's id is its own: no tunnel that logs in by itself shares it).
 */
function sharedWith(engine: Pick<EngineApi, 'supervisor'>, hash: string): string[] {
  const records = engine.supervisor.statuses();
  const id = records.find((r) => r.hash === hash)?.connection?.id;
  return id === undefined ? [] : records.filter((r) => r.hash !== hash && r.connection?.id === id).map((r) => r.name);
}
