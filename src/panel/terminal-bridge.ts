// The page's terminal on an interactive tunnel's login: a WebSocket from the browser
// to the panel (/api/terminal/<hash>), bridged to the daemon's /auth/<hash> with the
// daemon's token, which stays here. The browser's side passes the panel's own checks
// first: a loopback Host (or a password), its own Origin, and a session.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { parse as parseCookies } from 'hono/utils/cookie';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { SESSION_COOKIE, type Sessions } from './auth.js';
import { panelHostAllowed, panelOriginAllowed } from '../edge/host-origin-rules.js';
import type { PanelErrorCode } from './http-errors.js';
import { trustedConnection } from '../edge/trusted-connect.js';
import { httpFailure, networkFailure, type DaemonFailure } from './daemon-failure.js';

const PATH = /^\/api\/terminal\/([0-9a-f]{4,32})$/;
// The daemon's frame limit (TERMINAL_MAX_FRAME); the browser's frames pass through unchanged.
const MAX_FRAME = 64 * 1024;
/** Sent to the page, then the socket closes, when the daemon refuses or cannot be reached. */
const CLOSE_REFUSED = 4000;

export interface TerminalBridgeDeps {
  password: string | null;
  sessions: Sessions;
  /** The daemon's API, e.g. http://127.0.0.1:8080, and its token. */
  apiUrl: string;
  apiToken: string | null;
  log: (e: Record<string, unknown>) => void;
}

export interface TerminalBridge {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

function refuse(socket: Duplex, status: number, code: PanelErrorCode, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  socket.end(`HTTP/1.1 ${status} ${code}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

const toBuffer = (data: RawData): Buffer => (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));

export function createTerminalBridge(deps: TerminalBridgeDeps): TerminalBridge {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  const daemonBase = new URL(deps.apiUrl);
  daemonBase.username = '';
  daemonBase.password = '';
  daemonBase.protocol = daemonBase.protocol === 'https:' ? 'wss:' : 'ws:';

  function authorized(req: IncomingMessage): boolean {
    if (deps.password === null) return true;
    const cookies = parseCookies(req.headers.cookie ?? '', SESSION_COOKIE);
    return deps.sessions.touch(cookies[SESSION_COOKIE]);
  }

  function bridge(browser: WebSocket, hash: string): void {
    const url = new URL(`auth/${hash}`, daemonBase.href.endsWith('/') ? daemonBase.href : `${daemonBase.href}/`);
    const daemon = new WebSocket(url, {
      headers: deps.apiToken !== null ? { authorization: `Bearer ${deps.apiToken}` } : {},
      maxPayload: 1024 * 1024,
      // Only to a daemon the user owns (SPEC §6): keys typed at a login go nowhere else.
      ...(url.protocol === 'ws:' ? { createConnection: trustedConnection(process.getuid?.() ?? 0) as never } : {}),
    });
    const where = new URL(deps.apiUrl).origin;
    // The page shows `code` in its own language; `message` is the same in English.
    const refused = (f: DaemonFailure) => {
      const params = f.reason === 'connection' ? f.params : {};
      if (browser.readyState === browser.OPEN) browser.send(JSON.stringify({ type: 'refused', code: f.code, params, message: f.message }));
      browser.close(CLOSE_REFUSED, 'refused');
    };
    daemon.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(body);
        } catch {
          // Not the daemon's JSON: httpFailure says something else listens there.
        }
        refused(httpFailure(where, res.statusCode ?? 0, parsed, deps.apiToken !== null));
      });
    });
    daemon.on('error', (e: NodeJS.ErrnoException) => refused(networkFailure(where, e.code, false)));

    // Keys typed before the daemon's side is open wait for it (in order).
    const pending: { data: Buffer; binary: boolean }[] = [];
    browser.on('message', (data: RawData, isBinary: boolean) => {
      const frame = { data: toBuffer(data), binary: isBinary };
      if (daemon.readyState === daemon.OPEN) daemon.send(frame.data, { binary: frame.binary });
      else pending.push(frame);
    });
    daemon.on('open', () => {
      for (const f of pending.splice(0)) daemon.send(f.data, { binary: f.binary });
    });
    daemon.on('message', (data: RawData, isBinary: boolean) => {
      if (browser.readyState === browser.OPEN) browser.send(toBuffer(data), { binary: isBinary });
    });
    daemon.on('close', (code: number, reason: Buffer) => {
      if (browser.readyState === browser.OPEN) browser.close(code === 1005 || code === 1006 ? 1000 : code, reason.toString('utf8'));
    });
    // The page closed its terminal: the panel lets go of the daemon's too (the login goes on).
    browser.on('close', () => {
      if (daemon.readyState === daemon.OPEN || daemon.readyState === daemon.CONNECTING) daemon.close();
    });
    browser.on('error', () => daemon.terminate());
  }

  return {
    upgrade(req, socket, head) {
      socket.on('error', () => undefined);
      const path = new URL(req.url ?? '/', 'http://panel').pathname;
      const m = PATH.exec(path);
      if (m === null) return refuse(socket, 404, 'not_found', `no WebSocket route ${path.slice(0, 200)}`);
      if (!panelHostAllowed(req.headers.host, deps.password !== null)) {
        return refuse(socket, 403, 'host_not_allowed', 'this panel answers only to a loopback host name; set PANEL_TOKEN to serve it under another name');
      }
      // A WebSocket is not bound by the same-origin policy: only the panel's own page may open one.
      const origin = req.headers.origin;
      if (origin === undefined || !panelOriginAllowed('POST', { origin, host: req.headers.host })) {
        return refuse(socket, 403, 'foreign_origin', 'terminals open only from the panel\'s own page');
      }
      if (!authorized(req)) return refuse(socket, 401, 'login_required', 'log in with the panel password first');
      const hash = m[1] as string;
      wss.handleUpgrade(req, socket, head, (browser) => {
        deps.log({ event: 'panel_terminal_opened', hash });
        bridge(browser, hash);
      });
    },
    close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
