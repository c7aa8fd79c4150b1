import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerParserErrors, LISTENER_OPTIONS, requireHost } from '../http-listener.js';
import type { ProxyDeps } from './deps.js';
import { createProxyHandler } from './handler.js';

/** A running `tunnel-manager proxy` listener. */
export interface ProxyServer {
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting, ends open requests (their upstream requests are aborted) and resolves when the listener is closed. */
  close(): Promise<void>;
}

/** Serves the `/v1` group alone on host:port, with the node:http fast path. */
export function startProxyServer(options: { host: string; port: number; deps: ProxyDeps }): Promise<ProxyServer> {
  const handler = createProxyHandler(options.deps);
  // Streams may stay open for as long as the upstream keeps talking; the per-provider
  // timeouts bound them, not Node's request timer.
  const server = http.createServer({ requestTimeout: 0, noDelay: true, keepAliveTimeout: 65_000, ...LISTENER_OPTIONS }, requireHost(handler));
  answerParserErrors(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      let closing: Promise<void> | null = null;
      resolve({
        port: (server.address() as AddressInfo).port,
        close() {
          closing ??= new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
            handler.close();
          });
          return closing;
        },
      });
    });
  });
}
