import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import SSHConfig, { type Line } from 'ssh-config';

const MAX_FILES = 32;
const MAX_DEPTH = 4;

function values(v: Line & { value?: unknown }): string[] {
  const raw = v.value;
  if (typeof raw === 'string') return raw.split(/\s+/);
  if (Array.isArray(raw)) return raw.map((x: { val?: unknown }) => String(x.val ?? ''));
  return [];
}

/** Host aliases a user may type as remote_host: no patterns (`*`, `?`), no negations. */
export function hostAliases(text: string): { hosts: string[]; includes: string[] } {
  const hosts: string[] = [];
  const includes: string[] = [];
  const walk = (lines: readonly Line[]) => {
    for (const line of lines) {
      if (line.type !== SSHConfig.DIRECTIVE) continue;
      const param = line.param.toLowerCase();
      if (param === 'host') hosts.push(...values(line).filter((h) => h !== '' && !/[*?!]/.test(h)));
      if (param === 'include') includes.push(...values(line).filter((p) => p !== ''));
      const nested = (line as { config?: readonly Line[] }).config;
      if (nested) walk(nested);
    }
  };
  walk(SSHConfig.parse(text));
  return { hosts, includes };
}

/** `Include` paths as ssh reads them: relative to ~/.ssh, `~` the home, `*` in the file name. */
async function expandInclude(pattern: string, sshDir: string, home: string | null): Promise<string[]> {
  let p = pattern;
  if (p.startsWith('~/')) {
    if (home === null) return [];
    p = join(home, p.slice(2));
  } else if (!isAbsolute(p)) p = join(sshDir, p);
  const name = basename(p);
  if (!/[*?]/.test(name)) return [p];
  if (/[*?]/.test(dirname(p))) return [];
  const re = new RegExp(`^${name.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  const files = await readdir(dirname(p)).catch(() => [] as string[]);
  return files.filter((f) => re.test(f)).sort().map((f) => join(dirname(p), f));
}

/**
 * The Host entries of the user's SSH config and the files it includes, offered as
 * remote_host suggestions. Reads only; a missing or unreadable file gives none.
 */
export async function readSshHosts(sshConfigPath: string | null, home: string | null): Promise<string[]> {
  if (sshConfigPath === null) return [];
  const sshDir = dirname(sshConfigPath);
  const seen = new Set<string>();
  const found = new Set<string>();
  const visit = async (path: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || seen.has(path) || seen.size >= MAX_FILES) return;
    seen.add(path);
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) return;
    const { hosts, includes } = hostAliases(text);
    for (const h of hosts) found.add(h);
    for (const inc of includes) for (const file of await expandInclude(inc, sshDir, home)) await visit(file, depth + 1);
  };
  await visit(sshConfigPath, 0);
  return [...found].sort((a, b) => a.localeCompare(b));
}
