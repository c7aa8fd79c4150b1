// Cheap checks that tell a retrying tunnel its fault has ended, so that it logs in
// again at once instead of sleeping out its backoff.
import net from 'node:net';
import { unreachable } from '../../kernel/unreachable.js';

export type ProbeTarget =
  /** The ssh server's TCP port accepts connections again. */
  | { kind: 'ssh-port'; host: string; port: number }
  /** Our local listening address can be bound again. */
  | { kind: 'local-bind'; host: string; port: number };

/** True when the fault the target watches has ended; never rejects. */
export type Probe = (target: ProbeTarget, signal: AbortSignal) => Promise<boolean>;

const CONNECT_TIMEOUT_MS = 1_000;

function tcpAccepts(host: string, port: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(ok);
    };
    const onAbort = () => finish(false);
    // A blackholed server never answers; a probe must not hang the retry loop.
    const timer = setTimeout(() => finish(false), CONNECT_TIMEOUT_MS);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export const tcpProbe: Probe = async (target, signal) => {
  if (signal.aborted) return false;
  switch (target.kind) {
    case 'ssh-port':
      return tcpAccepts(target.host, target.port, signal);
    case 'local-bind':
      return canBind(target.host, target.port);
    default:
      return unreachable(target, 'probe target');
  }
};
