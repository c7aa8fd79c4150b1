/**
 * A unified diff (`diff -u` format) of two texts with the same number of lines, where
 * `changed` lists the indices that differ: what `migrate` produces, since it only ever
 * replaces lines in place. Three lines of context; nearby changes share a hunk.
 */
const CONTEXT = 3;

export function unifiedDiff(path: string, before: readonly string[], after: readonly string[], changed: readonly number[]): string {
  const hunks: [number, number][] = [];
  for (const i of [...changed].sort((a, b) => a - b)) {
    const start = Math.max(0, i - CONTEXT);
    const end = Math.min(before.length - 1, i + CONTEXT);
    const last = hunks[hunks.length - 1];
    if (last && start <= last[1] + 1) last[1] = end;
    else hunks.push([start, end]);
  }
  const set = new Set(changed);
  const out = [`--- ${path}\n`, `+++ ${path} (migrated)\n`];
  for (const [start, end] of hunks) {
    const n = end - start + 1;
    out.push(`@@ -${start + 1},${n} +${start + 1},${n} @@\n`);
    for (let i = start; i <= end; i++) {
      if (set.has(i)) out.push(`-${before[i] ?? ''}\n`, `+${after[i] ?? ''}\n`);
      else out.push(` ${before[i] ?? ''}\n`);
    }
  }
  return out.join('');
}
