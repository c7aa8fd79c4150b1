import type { TunnelSpec, DirectionMode } from '../tunnel/spec.js';
import { forwardFlag } from '../tunnel/ssh-args.js';

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * The tunnel whose local listening end is host:port, if any: the proxy names it in a
 * 502 ("… is the local end of tunnel 'llm' (…), which is RETRYING, not RUNNING") when a provider's base_url
 * points at it. Only -L forwards listen locally; a bare port listens on loopback.
 */
export function tunnelListeningOn(tunnels: readonly TunnelSpec[], mode: DirectionMode, host: string, port: number): TunnelSpec | undefined {
  const h = host.replace(/^\[|\]$/g, '');
  return tunnels.find((t) => {
    if (forwardFlag(t.direction, mode) !== '-L' || t.local_port.port !== port) return false;
    const bind = t.local_port.host ?? '127.0.0.1';
    if (bind === h) return true;
    if (bind === '0.0.0.0') return true;
    return LOOPBACK_NAMES.has(bind) && LOOPBACK_NAMES.has(h);
  });
}

/**
 * The tunnel named `name` as a provider bound to it sees it: where its local end
 * listens (a wildcard bind is reached on loopback) — only -L forwards have one.
 */
export function localEndOf(tunnels: readonly TunnelSpec[], mode: DirectionMode, name: string): { hash: string; host: string; port: number } | undefined {
  const t = tunnels.find((x) => x.name === name);
  if (t === undefined || forwardFlag(t.direction, mode) !== '-L') return undefined;
  const bind = t.local_port.host ?? '127.0.0.1';
  const host = bind === '0.0.0.0' || bind === '*' || bind === 'localhost' ? '127.0.0.1' : bind === '::' ? '::1' : bind.replace(/^\[|\]$/g, '');
  return { hash: t.hash, host, port: t.local_port.port };
}
