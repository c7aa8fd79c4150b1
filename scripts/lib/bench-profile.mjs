// Reads the .cpuprofile files `node --cpu-prof` wrote and sums self time per function
// and per file, so a benchmark can say where the daemon's time went.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Self time (ms) per function and per source file over every profile in `dir`,
 * heaviest first. Paths are shown relative to `root` (node internals and
 * node_modules stay recognisable).
 */
export function summarizeProfiles(dir, root, top = 15) {
  const byFn = new Map();
  const byFile = new Map();
  let totalMs = 0;
  let idleMs = 0;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
    const selfUs = new Map();
    for (let i = 0; i < prof.samples.length; i++) {
      const dt = prof.timeDeltas[i] ?? 0;
      selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + dt);
    }
    for (const [id, us] of selfUs) {
      const n = nodes.get(id);
      if (!n) continue;
      const cf = n.callFrame;
      const msv = us / 1000;
      if (cf.functionName === '(idle)') { idleMs += msv; continue; }
      totalMs += msv;
      let url = cf.url || '(native)';
      if (url.startsWith('file://')) url = relative(root, url.slice(7));
      const fnKey = `${cf.functionName || '(anonymous)'} ${url}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
      byFn.set(fnKey, (byFn.get(fnKey) ?? 0) + msv);
      const fileKey = url.replace(/^node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*$/, 'node_modules/$1');
      byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + msv);
    }
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => ({ name: k, ms: v, share: totalMs ? v / totalMs : 0 }));
  return { totalMs, idleMs, functions: sorted(byFn), files: sorted(byFile) };
}
