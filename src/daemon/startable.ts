import { sharedListener } from '../config/conflicts.js';
import type { RejectedEntry } from '../config/types.js';
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';

/**
 * Which new entries of a file with problems may start now. A tunnel kept from an
 * earlier file (its entry changed or removed, but the file has problems, so nothing
 * running is stopped) still holds its listening address; a new entry that would
 * listen there could only fail and retry, so it waits, reported like an entry left
 * out, until a file without problems replaces the old tunnel with it.
 */
export function startable(
  added: readonly TunnelSpec[],
  held: readonly TunnelSpec[],
  positions: readonly { hash: string; index: number; line: number; column: number }[],
  mode: DirectionMode,
): { start: TunnelSpec[]; waiting: RejectedEntry[] } {
  const start: TunnelSpec[] = [];
  const waiting: RejectedEntry[] = [];
  for (const t of added) {
    const clash = held.map((h) => ({ h, field: sharedListener(h, t, mode) })).find((c) => c.field !== null);
    const at = positions.find((p) => p.hash === t.hash);
    if (!clash || clash.field === null || !at) {
      start.push(t);
      continue;
    }
    const field = clash.field;
    waiting.push({
      index: at.index,
      line: at.line,
      column: at.column,
      name: t.name,
      problems: [
        {
          line: at.line,
          column: at.column,
          field: `tunnels[${at.index}].${field}`,
          expected: 'a listening address and port no running tunnel uses',
          found: `${JSON.stringify(t[field].text)}, where the running tunnel ${JSON.stringify(clash.h.name)} (${clash.h.hash.slice(0, 8)}) listens: it is kept while the file has problems, and this entry starts once the file has none`,
        },
      ],
    });
  }
  return { start, waiting };
}
