import { readFile } from 'node:fs/promises';
import { isMap, isScalar, isSeq } from 'yaml';
import { IDENTITY_FIELDS } from '../config/identity.js';
import { loadYaml, MAX_CONFIG_BYTES } from '../config/yaml-loader.js';
import { migrate } from '../config/migrate.js';
import { formatHashChange } from '../config/reference-compare.js';
import { shellQuote } from './rules.js';
import type { CheckProblem } from './report.js';

/**
 * What `check` says about a file written for the reference implementation (SPEC §12):
 * a file YAML refuses but `migrate` can repair gets that command as its fix, and every
 * tunnel whose hash differs from the reference's (because the reference misread the
 * YAML) is named with the reason, so scripts that stored hashes can be updated.
 *
 * The hashes differ for any entry with a comment after a value, which is common in files
 * written for tunnel-manager (its own samples have them) and matters only to someone
 * whose scripts stored the reference's hashes. So the differences are told only for a
 * file the reference could have run as it is: one without anything only tunnel-manager
 * reads (a key beside `tunnels`, an entry key beyond the reference's six). `migrate`
 * lists them for any file.
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
      what: `YAML refuses values of this file, or reads them as something else than the text autossh-tunnel-dockerized read there (line ${lines}); migrate rewrites those lines as valid YAML with that text, so the same hashes`,
      fix: `tunnel-manager migrate --config ${shellQuote(path)} --write`,
    });
  }
  if (writtenForTunnelManager(m.value.text)) return { problems, notes: [] };
  const notes = m.value.changes.map((c) => `${path}: hash differs from autossh-tunnel-dockerized's: ${formatHashChange(c)}`);
  return { problems, notes };
}

const REFERENCE_KEYS: ReadonlySet<string> = new Set(IDENTITY_FIELDS);

/** True when the file holds a key the reference never read: it was written for tunnel-manager (or is past the loader's limits, so nothing is told). */
function writtenForTunnelManager(text: string): boolean {
  const loaded = loadYaml(text);
  if (!loaded.ok) return true;
  const root = loaded.value.doc.contents;
  if (!isMap(root)) return false;
  const keyText = (k: unknown) => (isScalar(k) ? String(k.value) : '');
  if (root.items.some((p) => keyText(p.key) !== 'tunnels')) return true;
  const seq = root.get('tunnels', true);
  if (!isSeq(seq)) return false;
  return seq.items.some((item) => isMap(item) && item.items.some((p) => !REFERENCE_KEYS.has(keyText(p.key))));
}
