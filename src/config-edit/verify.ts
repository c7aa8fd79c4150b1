import { err, ok, type Result } from '../kernel/result.js';
import type { EntryView } from './read-entries.js';
import { fieldMeaning as meaning, FORM_FIELDS, type TunnelInput } from './tunnel-input.js';

/**
 * The other half of "never loses an edit": after an edit, the entries it wrote read
 * back (aliases and merge keys applied, as the daemon reads them) with exactly the
 * values the client sent. Anything else is a bug in the editor, refused before the
 * file is written.
 */

/** An entry the edit wrote: its place in the list after the edit and what the client sent. */
export interface Written {
  index: number;
  input: TunnelInput;
  /** False for an entry kept as it was because it already had the hash sent (its health_check is left as written). */
  checkHealth: boolean;
}

function mismatch(view: EntryView, w: Written): string | null {
  for (const f of FORM_FIELDS) {
    if (meaning(f, view.fields[f]) !== meaning(f, w.input.fields[f])) return `${f} reads ${JSON.stringify(view.fields[f])}`;
  }
  if (w.input.interactive !== undefined && view.interactive !== w.input.interactive) return `interactive reads ${String(view.interactive)}`;
  const hc = w.input.health_check;
  if (!w.checkHealth || hc === undefined) return null;
  if (hc === null || hc.type === '') return view.health_check === null ? null : 'health_check is still there';
  const now = view.health_check;
  return now !== null && now.type === hc.type && now.interval === hc.interval && now.failures === hc.failures && now.path === hc.path ? null : 'health_check differs';
}

/** Null when every written entry reads back as sent, else what does not. */
export function writtenEntriesHold(views: readonly EntryView[], written: readonly Written[]): Result<void, string> {
  for (const w of written) {
    const view = views[w.index];
    const wrong = view === undefined ? 'it is missing' : mismatch(view, w);
    if (wrong !== null) return err(`tunnel number ${w.index + 1} would not read back as sent (${wrong}); nothing was saved`);
  }
  return ok(undefined);
}
