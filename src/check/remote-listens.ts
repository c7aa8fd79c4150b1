import { sharedListener } from '../config/conflicts.js';
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';
import type { CheckProblem, TunnelResolution } from './report.js';

/**
 * Two tunnels that listen on the same server under different names (`db-alias` and
 * `user@10.0.0.5` being one host) pass the config file's own check, which compares
 * the names as written. Once `ssh -G` has resolved each alias, the listens on a server
 * are compared by the host and port ssh really connects to.
 */
export function remoteListenClashes(tunnels: readonly TunnelSpec[], resolutions: readonly TunnelResolution[], mode: DirectionMode): CheckProblem[] {
  const resolved = tunnels.flatMap((t) => {
    const r = resolutions.find((x) => x.hash === t.hash);
    // The server as ssh reaches it; the user does not matter to a port on it.
    return r ? [{ spec: { ...t, remote_host: `${r.hostname.toLowerCase()}:${r.port}` }, original: t }] : [];
  });
  const problems: CheckProblem[] = [];
  resolved.forEach((b, i) => {
    const a = resolved.slice(0, i).find((x) => sharedListener(x.spec, b.spec, mode) === 'remote_port');
    if (!a) return;
    problems.push({
      where: `tunnel ${JSON.stringify(b.original.name)} (line ${b.original.line})`,
      what: `it would listen on port ${b.original.remote_port.text} of ${b.spec.remote_host}, where tunnel ${JSON.stringify(a.original.name)} (line ${a.original.line}) already listens: ${JSON.stringify(a.original.remote_host)} and ${JSON.stringify(b.original.remote_host)} are the same server; the second cannot start`,
      fix: null,
    });
  });
  return problems;
}
