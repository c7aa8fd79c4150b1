import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MAX_CONFIG_BYTES } from '../config/yaml-loader.js';
import { migrate } from '../config/migrate.js';
import { formatHashChange } from '../config/reference-compare.js';
import { saveBackup, writeAtomic } from '../config-edit/file-io.js';
import { unifiedDiff } from './unified-diff.js';

/**
 * `tunnel-manager migrate` (SPEC §12): prints what a config file written for the
 * reference implementation becomes as valid YAML, as a diff, and which hashes differ
 * from the reference's and why. Only `--write` touches the file: a backup first,
 * then an atomic replace that gives up if the file changed meanwhile.
 */
export interface MigrateOptions {
  configPath: string;
  /** The file as the user named it, for what is printed (default: configPath). */
  shownPath?: string;
  write: boolean;
  /** Where the copy of the previous text goes (the panel's backup folder by default). */
  backupDir?: string;
}

export interface MigrateOutcome {
  code: 0 | 1;
  out: string;
  err: string;
}

const KEEP_BACKUPS = 10;

export async function runMigrate(opts: MigrateOptions): Promise<MigrateOutcome> {
  const file = opts.configPath;
  // Read at its absolute path; told as the user named it.
  const path = opts.shownPath ?? file;
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_CONFIG_BYTES) return { code: 1, out: '', err: `${path}: a config file is at most ${MAX_CONFIG_BYTES} bytes; this one has ${bytes.length}\n` };
    text = bytes.toString('utf8');
  } catch (e) {
    return { code: 1, out: '', err: `${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})\n` };
  }
  const m = migrate(text);
  if (!m.ok) return { code: 1, out: '', err: `${path}: ${m.error}\n` };
  const { changedLines, changes, tabWidth } = m.value;

  const out: string[] = [];
  if (changedLines.length === 0) {
    out.push(`${path} is valid YAML already; nothing to change.\n`);
  } else {
    out.push(unifiedDiff(path, text.split('\n'), m.value.text.split('\n'), changedLines));
    const tabs = tabWidth === null ? '' : `, tabs in indentation read as ${tabWidth} columns`;
    out.push(`\n${changedLines.length} line${changedLines.length === 1 ? '' : 's'} changed${tabs}; every value stays as the reference read it, so its hashes stay.\n`);
    for (const note of m.value.notes) out.push(`  ${note}\n`);
  }
  if (changes.length === 0) {
    out.push('Every tunnel has the hash the reference gave it.\n');
  } else {
    out.push(`\n${changes.length} tunnel${changes.length === 1 ? '' : 's'} will have another hash than under the reference, which misread the file there:\n`);
    for (const c of changes) out.push(`  ${formatHashChange(c)}\n`);
  }

  if (!opts.write || changedLines.length === 0) {
    if (changedLines.length > 0) out.push(`\nNothing written; run again with --write to replace ${path} (a backup is kept).\n`);
    return { code: 0, out: out.join(''), err: '' };
  }
  const backupDir = opts.backupDir ?? join(dirname(file), '.panel-backups');
  const backup = await saveBackup(backupDir, file, text, KEEP_BACKUPS);
  const written = await writeAtomic(file, m.value.text, async () => (await readFile(file, 'utf8').catch(() => null)) === text);
  if (!written) return { code: 1, out: out.join(''), err: `${path} changed while it was being migrated; nothing written (backup of the text read: ${backup})\n` };
  out.push(`\nWrote ${path}; the previous text is in ${backup}.\n`);
  return { code: 0, out: out.join(''), err: '' };
}
