import { readFile } from 'node:fs/promises';
import { MAX_CONFIG_BYTES } from '../config/guard.js';
import { migrate } from '../config/migrate.js';
import { formatHashChange } from '../config/reference-compare.js';
import type { CheckProblem } from './report.js';

/**
 * What `check` says about a file written for the reference implementation (SPEC §12):
 * a file YAML refuses but `migrate` can repair gets that command as its fix, and every
 * tunnel whose hash differs from the reference's (because the reference misread the
 * YAML) is named with the reason, so scripts that stored hashes can be updated.
 */
export async function checkReferenceHashes(path: string): Promise<{ problems: CheckProblem[]; notes: string[] }> {
  const bytes = await readFile(path).catch(() => null);
  if (bytes === null || bytes.length > MAX_CONFIG_BYTES) return { problems: [], notes: [] };
  const m = migrate(bytes.toString('utf8'));
  if (!m.ok) return { problems: [], notes: [] };
  const problems: CheckProblem[] = [];
  if (m.value.changedLines.length > 0) {
    const lines = m.value.changedLines.map((i) => i + 1).join(', ');
    problems.push({
      where: path,
      what: `YAML refuses this file as written for autossh-tunnel-dockerized (line ${lines}); migrate rewrites those lines as valid YAML with the same values and hashes`,
      fix: `tunnel-manager migrate --config ${JSON.stringify(path)} --write`,
    });
  }
  const notes = m.value.changes.map((c) => `${path}: hash differs from autossh-tunnel-dockerized's: ${formatHashChange(c)}`);
  return { problems, notes };
}
