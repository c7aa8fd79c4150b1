// One health_check attempt through a tunnel's forward (SPEC §5): `tcp` connects and
// makes sure the connection stays open (a forward whose target refuses closes it at
// once); `http` sends a request and takes any answer as a pass.
import http from 'node:http';
import net from 'node:net';
import type { CheckTarget } from '../../tunnel/check-target.js';
import type { HealthCheck } from '../../tunnel/spec.js';
import { unreachable } from '../../kernel/unreachable.js';

export type { CheckTarget };

export interface CheckResult {
  ok: boolean;
  /** What failed, for the health reason; empty on a pass. */
  detail: string;
}

/** How long a tcp check's connection must stay open: ssh closes it within a round trip when the target refuses. */
export const TCP_HOLD_MS = 1_000;
/** Upper bound of one attempt; a shorter interval bounds it further. */
export const CHECK_TIMEOUT_MS = 5_000;

const where = (t: CheckTarget) => `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;

function tcpCheck(target: CheckTarget, timeoutMs: number, signal: AbortSignal): Promise<CheckResult> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port });
    let connected = false;
    const finish = (r: CheckResult) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(r);
    };
    const onAbort = () => finish({ ok: true, detail: '' });
    const timer = setTimeout(
      () => finish(connected ? { ok: true, detail: '' } : { ok: false, detail: `no connection to ${where(target)} within ${timeoutMs} ms` }),
      timeoutMs,
    );
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      setTimeout(() => finish({ ok: true, detail: '' }), Math.min(TCP_HOLD_MS, timeoutMs));
    });
    // Data is fine (a banner); the connection closing at once is not.
    socket.on('data', () => {});
    socket.once('close', () => finish({ ok: false, detail: `the connection through ${where(target)} was closed at once` }));
    socket.once('error', (e) => finish({ ok: false, detail: `connecting to ${where(target)} failed: ${e.message}` }));
  });
}

function httpCheck(target: CheckTarget, path: string, timeoutMs: number, signal: AbortSignal): Promise<CheckResult> {
  return new Promise((resolve) => {
    const url = `http://${where(target)}${path}`;
    const req = http.request({ host: target.host, port: target.port, path, method: 'GET', agent: false, signal, headers: { 'user-agent': 'tunnel-manager-health-check' } }, (res) => {
      res.resume();
      clearTimeout(timer);
      resolve({ ok: true, detail: '' });
      req.destroy();
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ ok: false, detail: `no answer to GET ${url} within ${timeoutMs} ms` });
    }, timeoutMs);
    req.once('error', (e) => {
      clearTimeout(timer);
      resolve(signal.aborted ? { ok: true, detail: '' } : { ok: false, detail: `GET ${url} failed: ${e.message}` });
    });
    req.end();
  });
}

/** Runs one check; never rejects. An aborted check counts as a pass (nobody reads it). */
export function runHealthCheck(check: HealthCheck, target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
  const timeoutMs = Math.min(CHECK_TIMEOUT_MS, check.interval * 1000);
  switch (check.type) {
    case 'tcp':
      return tcpCheck(target, timeoutMs, signal);
    case 'http':
      return httpCheck(target, check.path, timeoutMs, signal);
    default:
      return unreachable(check.type, 'health check');
  }
}
