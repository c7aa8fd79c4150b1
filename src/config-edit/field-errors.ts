import type { ConfigProblem } from '../config/types.js';
import { FORM_FIELDS, type Edit, type FormField } from './tunnel-input.js';

/** Validation of a candidate file, told back to the form: per field, and the rest. */
export interface FieldErrors {
  /** By form field; `health_check` gathers the problems of its sub-fields. */
  fields: Partial<Record<FormField | 'health_check', string>>;
  general: string[];
  /** The same problems as found, for a reader that words them itself (the panel's catalogues). */
  problems: { field: FormField | 'health_check' | null; problem: ConfigProblem }[];
}

const ENTRY = /^tunnels\[(\d+)\](?:\.([A-Za-z0-9_]+))?/;

/** "line 4, column 17: tunnels[0].local_port: expected …, found …" */
export function problemText(p: ConfigProblem): string {
  const where = p.line > 0 ? `line ${p.line}, column ${p.column}: ` : '';
  return `${where}${p.field}: expected ${p.expected}, found ${p.found}`;
}

function entryOf(p: ConfigProblem): { index: number; key: string | null } | null {
  const m = ENTRY.exec(p.field);
  return m ? { index: Number(m[1]), key: m[2] ?? null } : null;
}

/** The field path a problem of the original file gets once the edit is applied. */
function remap(field: string, edit: Edit): string | null {
  const m = ENTRY.exec(field);
  if (!m || edit.kind !== 'delete') return field;
  const i = Number(m[1]);
  if (i === edit.index) return null;
  return i > edit.index ? field.replace(`tunnels[${i}]`, `tunnels[${i - 1}]`) : field;
}

const key = (field: string, p: ConfigProblem) => `${field}|${p.expected}|${p.found}`;

/**
 * What stops a save. The daemon's own validation ran on the file before and after
 * the edit: a problem on one of the edited entry's form fields is shown next to that
 * field; any other problem the edit introduced is shown above the form. Problems the
 * file already had elsewhere do not block an unrelated edit — the user could not fix
 * them from this form. Null when the edit may be saved.
 */
export function blockingErrors(before: readonly ConfigProblem[], after: readonly ConfigProblem[], edit: Edit, entriesAfter: number): FieldErrors | null {
  const edited = edit.kind === 'add' ? entriesAfter - 1 : edit.kind === 'update' ? edit.index : -1;
  const known = new Set<string>();
  for (const p of before) {
    const f = remap(p.field, edit);
    if (f !== null) known.add(key(f, p));
  }
  const out: FieldErrors = { fields: {}, general: [], problems: [] };
  for (const p of after) {
    const entry = entryOf(p);
    const onForm = (FORM_FIELDS as readonly string[]).includes(entry?.key ?? '') || entry?.key === 'health_check';
    const formField = entry?.index === edited && onForm ? (entry.key as FormField | 'health_check') : null;
    const isNew = !known.has(key(p.field, p));
    if (formField !== null) {
      const sub = p.field.slice(p.field.indexOf(formField) + formField.length).replace(/^\./, '');
      const message = `${sub !== '' ? `${sub}: ` : ''}expected ${p.expected}, found ${p.found}`;
      out.fields[formField] = out.fields[formField] ? `${out.fields[formField]}; ${message}` : message;
      out.problems.push({ field: formField, problem: p });
    } else if (isNew) {
      out.general.push(problemText(p));
      out.problems.push({ field: null, problem: p });
    }
  }
  return Object.keys(out.fields).length > 0 || out.general.length > 0 ? out : null;
}
