import { dirname, join } from 'node:path';
import { parseConfigText } from '../config/load.js';
import { SIZE_LIMIT } from '../config/yaml-loader.js';
import type { ConfigProblem } from '../config/types.js';
import { err, ok, type Result } from '../kernel/result.js';
import type { DirectionMode } from '../tunnel/spec.js';
import { applyEdit } from './edit.js';
import { blockingErrors, type FieldErrors } from './field-errors.js';
import { readFileState, saveBackup, writeAtomic, type FileState } from './file-io.js';
import { readEntries, type EntryView } from './read-entries.js';
import type { Edit } from './tunnel-input.js';
import { parseEditable, printEditable } from './yaml-doc.js';
import { unreachable } from '../kernel/unreachable.js';

/** The config file as the page sees it. */
export interface ConfigView {
  path: string;
  /** sha256 of the file's text ("missing" when there is none); sent back on save. */
  version: string;
  missing: boolean;
  /** The daemon's own validation of the file on disk. */
  valid: boolean;
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
  /** How much of the file the daemon can apply: all, partial (the entries in `rejected` are left out), none. */
  applied: 'all' | 'partial' | 'none';
  /** Indices of the entries left out for their problems. */
  rejected: number[];
  entries: EntryView[];
  /** Why the form cannot edit this file (YAML syntax error, not a map, too big), else null. */
  not_editable: string | null;
}

export type SaveFailure =
  | {
      reason: 'conflict';
      message: string;
      current: ConfigView;
      /** The entry on disk now that the edit was about (found by hash, else by position). */
      theirs: EntryView | null;
      /** True when that entry is still exactly as the page loaded it: only other parts of the file changed. */
      theirs_unchanged: boolean;
    }
  | { reason: 'invalid'; message: string; errors: FieldErrors }
  | { reason: 'not_editable'; message: string }
  | { reason: 'not_found'; message: string };

export interface SaveResult {
  view: ConfigView;
  /** Set when the previous text could not be backed up (the save itself went through). */
  backup_error: string | null;
}

const TOO_BIG = `the file is over ${SIZE_LIMIT}; fix it by hand`;

/** Where previous versions of the file are kept unless told otherwise: `.panel-backups` next to it (outside what the daemon reloads). */
export function defaultBackupDir(configPath: string): string {
  return join(dirname(configPath), '.panel-backups');
}

/**
 * What to change: an edit, or a function that picks the edit from the file as it is
 * when the save runs (an edit addressed by hash finds its entry's place there).
 */
export type EditPlan = Edit | ((view: ConfigView) => Result<Edit, SaveFailure>);

export interface ConfigStoreDeps {
  path: string;
  /** Who writes, for the log: the panel or the daemon's /config API. */
  writer: 'panel' | 'api';
  mode: DirectionMode;
  backupDir: string;
  keepBackups: number;
  log: (e: Record<string, unknown>) => void;
}

interface Validation {
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
  applied: ConfigView['applied'];
  rejected: number[];
}

function validate(text: string, mode: DirectionMode): Validation {
  const r = parseConfigText(text, { mode });
  switch (r.kind) {
    case 'ok':
      return { problems: [], warnings: r.warnings, applied: 'all', rejected: [] };
    case 'partial':
      return { problems: r.problems, warnings: r.warnings, applied: 'partial', rejected: r.rejected.map((e) => e.index) };
    case 'invalid':
      return { problems: r.problems, warnings: [], applied: 'none', rejected: [] };
    case 'missing':
      return { problems: [], warnings: [], applied: 'all', rejected: [] };
    default:
      return unreachable(r, 'result');
  }
}

/**
 * The file the panel edits. Every save is checked against the version the page loaded
 * (optimistic concurrency: a file changed on disk since is a conflict, never silently
 * overwritten), validated with the daemon's own loader, backed up and written
 * atomically. Saves run one at a time.
 */
export class ConfigStore {
  readonly #deps: ConfigStoreDeps;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(deps: ConfigStoreDeps) {
    this.#deps = deps;
  }

  /** The file this store edits. */
  get path(): string {
    return this.#deps.path;
  }

  async view(): Promise<ConfigView> {
    return this.#viewOf(await readFileState(this.#deps.path));
  }

  #viewOf(f: FileState): ConfigView {
    const base = { path: this.#deps.path, version: f.version, missing: f.missing };
    if (f.tooBig !== null) {
      const problem: ConfigProblem = { line: 0, column: 0, field: '(file)', expected: `a file of at most ${SIZE_LIMIT}`, found: `${f.tooBig} bytes` };
      return { ...base, valid: false, problems: [problem], warnings: [], applied: 'none', rejected: [], entries: [], not_editable: TOO_BIG };
    }
    const text = f.text ?? '';
    const { problems, warnings, applied, rejected } = validate(text, this.#deps.mode);
    const entries = readEntries(text);
    return {
      ...base,
      valid: problems.length === 0,
      problems,
      warnings,
      applied,
      rejected,
      entries: entries.ok ? entries.value : [],
      not_editable: entries.ok ? null : entries.error.message,
    };
  }

  /**
   * Applies one edit if the file is still at `version` (null: whatever is on disk when
   * the save runs, still refused if it changes before the rename); `hash` names the
   * entry the user meant, for the conflict view.
   */
  save(version: string | null, plan: EditPlan, hash: string | null): Promise<Result<SaveResult, SaveFailure>> {
    const run = this.#queue.then(() => this.#save(version, plan, hash));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #save(version: string | null, plan: EditPlan, hash: string | null): Promise<Result<SaveResult, SaveFailure>> {
    const { path, mode, log } = this.#deps;
    const before = await readFileState(path);
    if (version !== null && before.version !== version) return err(this.#conflict(before, typeof plan === 'function' ? null : plan, hash));
    if (before.tooBig !== null) return err({ reason: 'not_editable', message: TOO_BIG });
    const chosen = typeof plan === 'function' ? plan(this.#viewOf(before)) : ok(plan);
    if (!chosen.ok) return chosen;
    const edit = chosen.value;
    const text = before.text ?? '';
    const next = applyEdit(text, edit);
    if (!next.ok) {
      return err(next.error.reason === 'not_found' ? { reason: 'not_found', message: next.error.message } : { reason: 'not_editable', message: next.error.message });
    }
    // An edit that changes nothing (a client saving what it read) leaves the file alone:
    // re-printing would only normalise its spacing.
    const same = parseEditable(text);
    if (same.ok && printEditable(same.value) === next.value) return ok({ view: this.#viewOf(before), backup_error: null });
    const entriesAfter = readEntries(next.value);
    const errors = blockingErrors(validate(text, mode).problems, validate(next.value, mode).problems, edit, entriesAfter.ok ? entriesAfter.value.length : 0);
    if (errors !== null) return err({ reason: 'invalid', message: 'the tunnel was not saved: fix the fields marked below', errors });

    let backup_error: string | null = null;
    if (before.text !== null) {
      try {
        await saveBackup(this.#deps.backupDir, path, before.text, this.#deps.keepBackups);
      } catch (e) {
        backup_error = `the previous version could not be backed up in ${this.#deps.backupDir}: ${e instanceof Error ? e.message : String(e)}`;
        log({ event: 'config_backup_failed', writer: this.#deps.writer, error: backup_error });
      }
    }
    // Checked again right before the rename: an editor may have saved while we worked.
    let raced: FileState | null = null;
    const written = await writeAtomic(path, next.value, async () => {
      const now = await readFileState(path);
      if (now.version === before.version) return true;
      raced = now;
      return false;
    });
    if (!written && raced) return err(this.#conflict(raced, edit, hash));
    log({ event: 'config_saved', writer: this.#deps.writer, path, edit: edit.kind, ...('index' in edit ? { index: edit.index } : {}) });
    return ok({ view: this.#viewOf(await readFileState(path)), backup_error });
  }

  #conflict(now: FileState, edit: Edit | null, hash: string | null): SaveFailure {
    const current = this.#viewOf(now);
    const byHash = hash !== null ? current.entries.find((e) => e.hash === hash) : undefined;
    const theirs = byHash ?? (edit !== null && 'index' in edit ? current.entries[edit.index] ?? null : null);
    return {
      reason: 'conflict',
      message: now.missing
        ? 'the file was deleted since you loaded it; nothing was saved'
        : 'the file changed on disk since you loaded it; nothing was saved',
      current,
      theirs: theirs ?? null,
      theirs_unchanged: byHash !== undefined,
    };
  }
}
