import net from 'node:net';
import tls from 'node:tls';
import { createResponseParser } from './http1-response.js';

/**
 * The proxy's HTTP/1.1 client for its providers: keep-alive connections pooled per
 * origin, each request written in one piece, each response parsed once by
 * `http1-response.ts` and its body handed on as the bytes arrive. It exists because
 * `http.request` costs more per call than the whole rest of a proxied request
 * (see BENCHMARKS.md); timeouts stay with the caller, which aborts.
 */

/** Where a provider lives. */
export interface Origin {
  protocol: 'http:' | 'https:';
  /** Bare host name or address (no IPv6 brackets), for connecting. */
  hostname: string;
  port: number;
  /** The `Host` header value, as the base URL spells it. */
  host: string;
}

/** One request. Header values must already be free of CR, LF and other control characters. */
export interface UpstreamCall {
  method: 'GET' | 'POST';
  path: string;
  /** Header lines after `host`, each ending in CRLF; `content-length` is added from `body`. */
  headerLines: string;
  body: Buffer | null;
}

/** Why an exchange failed. `answered`: the status line had arrived (so the client may have it already). */
export interface UpstreamFailure {
  code: string;
  message: string;
  answered: boolean;
}

/** What the caller learns about its exchange, in this order: head, data…, then end or fail (exactly one). */
export interface ExchangeSink {
  head(status: number, rawHeaders: string[]): void;
  data(chunk: Buffer): void;
  end(): void;
  fail(failure: UpstreamFailure): void;
}

export interface Exchange {
  /** Ends the exchange at once and closes its connection; no callback follows. */
  abort(): void;
  /** Stops reading the response (TCP then pushes back on the upstream). */
  pause(): void;
  resume(): void;
}

export interface UpstreamPool {
  request(origin: Origin, call: UpstreamCall, sink: ExchangeSink): Exchange;
  /** Closes the idle connections. */
  close(): void;
}

// Idle connections kept per origin, and for how long.
const MAX_IDLE_PER_ORIGIN = 256;
const IDLE_MS = 30_000;
// A reused connection that the upstream closed while it sat idle fails before any byte
// comes back; the request never reached the upstream, so it is sent once more on a new one.
const STALE = new Set(['ECONNRESET', 'EPIPE', 'EOF']);
const ignore = (): void => {};

interface Idle {
  socket: net.Socket;
  drop(): void;
}

/** `ca`: extra trusted certificates for https providers (tests use a self-signed one); the system's CAs otherwise. */
export function createUpstreamPool(options: { ca?: string | Buffer } = {}): UpstreamPool {
  const idle = new Map<string, Idle[]>();
  const keyOf = (o: Origin): string => `${o.protocol}//${o.hostname}:${o.port}`;

  function connect(o: Origin): net.Socket {
    const target = { host: o.hostname, port: o.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 1000 };
    const socket =
      o.protocol === 'http:'
        ? net.connect(target)
        : tls.connect({ ...target, servername: net.isIP(o.hostname) === 0 ? o.hostname : undefined, ALPNProtocols: ['http/1.1'], ca: options.ca });
    if (o.protocol === 'https:') socket.setNoDelay(true);
    // For its whole life: a late error on a socket that is pooled or being destroyed must not crash the process.
    socket.on('error', ignore);
    return socket;
  }

  function takeIdle(key: string): net.Socket | null {
    const list = idle.get(key);
    // Most recently used first: the one the upstream is least likely to have closed.
    for (let entry = list?.pop(); entry !== undefined; entry = list?.pop()) {
      const { socket: s, drop } = entry;
      s.off('data', drop).off('end', drop).off('close', drop).off('timeout', drop);
      if (!s.destroyed && s.readyState === 'open') {
        s.setTimeout(0);
        s.ref();
        return s;
      }
      s.destroy();
    }
    return null;
  }

  function putIdle(key: string, s: net.Socket): void {
    let list = idle.get(key);
    if (list === undefined) idle.set(key, (list = []));
    if (list.length >= MAX_IDLE_PER_ORIGIN) {
      s.destroy();
      return;
    }
    const entry: Idle = {
      socket: s,
      // Anything from the upstream while idle (data, end, close) makes the connection unusable.
      drop: () => {
        s.destroy();
        const at = list.indexOf(entry);
        if (at !== -1) list.splice(at, 1);
      },
    };
    s.on('data', entry.drop).on('end', entry.drop).on('close', entry.drop).on('timeout', entry.drop);
    s.setTimeout(IDLE_MS);
    s.unref();
    // A connection paused for a slow client may have finished its response while paused.
    s.resume();
    list.push(entry);
  }

  function request(origin: Origin, call: UpstreamCall, sink: ExchangeSink): Exchange {
    const key = keyOf(origin);
    const head = Buffer.from(
      `${call.method} ${call.path} HTTP/1.1\r\nhost: ${origin.host}\r\n${call.headerLines}` +
        (call.body === null ? '' : `content-length: ${call.body.length}\r\n`) +
        '\r\n',
      'latin1',
    );
    let socket: net.Socket;
    let over = false;
    let retried = false;
    let received = false;

    const parser = () =>
      createResponseParser({
        head: (status, raw) => !over && sink.head(status, raw),
        data: (chunk) => !over && sink.data(chunk),
        end: (reusable) => {
          if (over) return;
          over = true;
          detach();
          if (reusable) putIdle(key, socket);
          else socket.destroy();
          sink.end();
        },
      });

    let p = parser();

    function fail(code: string, message: string): void {
      if (over) return;
      over = true;
      detach();
      socket.destroy();
      sink.fail({ code, message, answered: p.headSeen });
    }

    function onData(chunk: Buffer): void {
      received = true;
      const error = p.push(chunk);
      if (error !== null) fail('EPROTO', `the upstream's answer is not valid HTTP/1.1: ${error}`);
    }

    function onEnd(): void {
      if (over) return;
      const error = p.eof();
      if (error === null) return;
      if (retry('EOF')) return;
      fail(p.headSeen ? 'ECONNRESET' : 'EOF', error);
    }

    function onError(e: NodeJS.ErrnoException): void {
      if (over) return;
      if (retry(e.code ?? '')) return;
      fail(e.code ?? 'ERROR', e.message);
    }

    function onClose(): void {
      // 'close' without 'end' or 'error' (destroyed from our side is handled by `over`).
      if (!over) onEnd();
    }

    function retry(code: string): boolean {
      if (!reused || retried || received || !STALE.has(code)) return false;
      retried = true;
      detach();
      socket.destroy();
      p = parser();
      start(connect(origin), false);
      return true;
    }

    function detach(): void {
      socket.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    }

    let reused = false;
    function start(s: net.Socket, wasIdle: boolean): void {
      socket = s;
      reused = wasIdle;
      s.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
      s.cork();
      s.write(head);
      if (call.body !== null && call.body.length > 0) s.write(call.body);
      s.uncork();
    }

    const pooled = takeIdle(key);
    start(pooled ?? connect(origin), pooled !== null);

    return {
      abort() {
        if (over) return;
        over = true;
        detach();
        socket.destroy();
      },
      // Once over, the connection may already serve another exchange.
      pause: () => void (over || socket.pause()),
      resume: () => void (over || socket.resume()),
    };
  }

  return {
    request,
    close() {
      for (const list of idle.values()) for (const { socket } of list.splice(0)) socket.destroy();
    },
  };
}
