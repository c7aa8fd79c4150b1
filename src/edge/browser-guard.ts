/**
 * The browser guard in front of every TCP listener of the daemon and of
 * `tunnel-manager proxy` (SPEC §6): before any route, fast path or WebSocket sees a
 * request, its Host and Origin pass the rules of edge/host-origin-rules.ts and a
 * state-changing body is JSON (or, under /v1, an upload). The unix socket has no
 * guard: no browser can reach it, and tools keep sending no such headers there.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, isV1Path, pathOf, type RequestListener } from './http-listener.js';
import { hostAllowed, isLoopbackName, isStateChanging, originAllowed, type HostPolicy } from './host-origin-rules.js';

/** What a listener answers to; read on every request, since `cors_origins` reloads with the config. */
export interface ListenerPolicy extends HostPolicy {
  /** `proxy.cors_origins` in force: the pages that may call `/v1` besides this machine's. */
  corsOrigins(): readonly string[] | null;
  /** The body of a refusal under `/v1`, in the shape its clients read (the proxy's); absent: the API's. */
  v1ErrorJson?(req: IncomingMessage, refused: Refusal): string;
}

/** A refusal: status, code and message of the JSON error. */
export interface Refusal {
  status: 403 | 415;
  code: string;
  message: string;
}

const shown = (text: string): string => JSON.stringify(text.slice(0, 200));

function hostsText(policy: HostPolicy): string {
  const names = [policy.listenHost, ...policy.allowedHosts].filter((n) => !isLoopbackName(n));
  return `localhost, 127.0.0.0/8 and [::1]${names.length > 0 ? `, and ${names.join(', ')}` : ''}`;
}

/**
 * The media types a state-changing body may have: JSON, and under /v1 also
 * multipart/form-data (audio uploads; the JSON endpoints refuse a form themselves,
 * and an unknown path gets the proxy's 404 listing its routes). `text/plain`, form
 * encoding and `multipart/form-data` are what a page may send cross-origin without
 * asking first; JSON is not, so a browser always asks (a preflight), which only
 * `proxy.cors_origins` are granted. A page's multipart request to /v1 still carries
 * its Origin, which the Origin rule refuses.
 */
function mediaTypeAllowed(contentType: string, v1: boolean): boolean {
  // What nearly every client sends, decided without splitting it.
  if (contentType === 'application/json') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (v1 && type === 'multipart/form-data');
}

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** Why a request is refused, or null when it may go on. Pure apart from reading the request's head. */
export function refusalOf(req: IncomingMessage, policy: ListenerPolicy, hostOk: (host: string | undefined) => boolean = (h) => hostAllowed(h, policy)): Refusal | null {
  const host = req.headers.host;
  if (!hostOk(host)) {
    return {
      status: 403,
      code: 'host_not_allowed',
      message: `this server does not answer to the Host ${shown(host ?? '')} (a web page's name pointed at this machine is refused): it answers to ${hostsText(policy)}; to reach it under another name, such as a reverse proxy's, add that name to TUNNEL_API_ALLOWED_HOSTS`,
    };
  }
  const path = pathOf(req.url);
  const v1 = isV1Path(path);
  const origin = req.headers.origin;
  if (!originAllowed(origin, policy, v1 ? policy.corsOrigins() : null)) {
    return {
      status: 403,
      code: 'origin_not_allowed',
      message: v1
        ? `requests from the web page at ${shown(origin ?? '')} are refused: list its origin in proxy.cors_origins to let it call /v1`
        : `requests from the web page at ${shown(origin ?? '')} are refused: the control API serves no pages, and only pages of this machine or of TUNNEL_API_ALLOWED_HOSTS may call it`,
    };
  }
  if (isStateChanging(req.method)) {
    const type = req.headers['content-type'];
    if ((type !== undefined || hasBody(req)) && !mediaTypeAllowed(type ?? '', v1)) {
      const expected = v1 ? 'Content-Type: application/json (multipart/form-data for an upload)' : 'Content-Type: application/json';
      return {
        status: 415,
        code: 'unsupported_media_type',
        message: `${req.method ?? ''} ${path.slice(0, 200)} needs ${expected}, found ${type === undefined ? 'a body without Content-Type' : shown(type)}`,
      };
    }
  }
  return null;
}

// Distinct Host values remembered per listener; a client sending ever new ones only empties the memory.
const HOST_MEMORY = 256;

/**
 * The Host rule with its answers remembered: a listener sees few distinct Host values,
 * and parsing one costs microseconds, which the /v1 fast path would feel.
 */
function rememberedHostRule(policy: ListenerPolicy): (host: string | undefined) => boolean {
  const known = new Map<string, boolean>();
  return (host) => {
    if (host === undefined) return hostAllowed(host, policy);
    let ok = known.get(host);
    if (ok === undefined) {
      ok = hostAllowed(host, policy);
      if (known.size >= HOST_MEMORY) known.clear();
      known.set(host, ok);
    }
    return ok;
  };
}

/** The listener with the guard in front of it. */
export function guardRequests(listener: RequestListener, policy: ListenerPolicy): RequestListener {
  const hostOk = rememberedHostRule(policy);
  return (req, res) => {
    const refused = refusalOf(req, policy, hostOk);
    if (refused === null) return listener(req, res);
    const shaped = isV1Path(pathOf(req.url)) ? policy.v1ErrorJson?.(req, refused) : undefined;
    answerRefusal(res, refused, shaped ?? errorBody(refused.code, refused.message));
  };
}

/** The same guard for WebSocket upgrades (the login terminals), answered on the raw socket. */
export function guardUpgrade(handler: (req: IncomingMessage, socket: Duplex, head: Buffer) => void, policy: ListenerPolicy) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const refused = refusalOf(req, policy);
    if (refused === null) return handler(req, socket, head);
    refuseUpgrade(socket, refused, errorBody(refused.code, refused.message));
  };
}

/** A refusal answered on the raw socket of an upgrade, which then closes. */
export function refuseUpgrade(socket: Duplex, refused: Refusal, body: string): void {
  socket.on('error', () => socket.destroy());
  socket.end(`HTTP/1.1 ${refused.status} ${refused.status === 403 ? 'Forbidden' : 'Unsupported Media Type'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * A refusal's answer. The connection closes after it: a body the request may still be
 * sending is not read.
 */
export function answerRefusal(res: ServerResponse, refused: Refusal, body: string): void {
  res.writeHead(refused.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': randomUUID(),
    connection: 'close',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
