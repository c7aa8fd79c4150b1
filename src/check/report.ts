/** One thing `tunnel-manager check` found wrong. */
export interface CheckProblem {
  /** The file, folder or tunnel it is about, as the user knows it. */
  where: string;
  /** What is wrong, as a sentence fragment (no trailing period). */
  what: string;
  /** A command to paste that fixes it (for a file Kubernetes mounts, the manifest's change), or null when only an edit can. */
  fix: string | null;
}

/** How one tunnel's `remote_host` resolved through `ssh -G`. */
export interface TunnelResolution {
  name: string;
  hash: string;
  remote_host: string;
  hostname: string;
  user: string;
  port: string;
  /** Identity files ssh would try, `~` expanded, with whether each is usable. */
  identities: { path: string; usable: boolean }[];
  /** True when an SSH agent (or a PKCS#11 provider) can supply keys. */
  agent: boolean;
}

/** Everything `runChecks` found, every problem at once. */
export interface CheckReport {
  configPath: string;
  sshConfigPath: string | null;
  /** The folder of the SSH config file (or ~/.ssh without one) as shown to the user, or why no folder is checked. */
  sshDir: string | null;
  stateDir: string;
  tunnels: TunnelResolution[];
  /** Things worth knowing that are not problems (decisions the check made, warnings). */
  notes: string[];
  /** What ssh accepts but could be tighter (a 755 SSH folder, a 644 config), each with its fix; not counted as problems. */
  warnings: CheckProblem[];
  /** Tunnels that open a port to more than this machine (SPEC §5): told, not counted as problems (the user may mean it). */
  exposure: CheckProblem[];
  problems: CheckProblem[];
}

/**
 * One problem per fix: tunnels that share a cause (two tunnels to one host that does
 * not resolve, or without a key) get one entry naming them all, so a fix that appends
 * to a file is printed once and cannot be run twice.
 */
export function mergeRepeated(problems: readonly CheckProblem[]): CheckProblem[] {
  const groups = new Map<string, { first: CheckProblem; wheres: string[] }>();
  for (const p of problems) {
    const key = JSON.stringify([p.what, p.fix]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { first: p, wheres: [p.where] });
    else if (!group.wheres.includes(p.where)) group.wheres.push(p.where);
  }
  return [...groups.values()].map(({ first, wheres }) => ({ ...first, where: listed(wheres) }));
}

// A thousand tunnels to one host make one line, not a page.
const MAX_LISTED = 5;

function listed(wheres: readonly string[]): string {
  if (wheres.length <= MAX_LISTED) return wheres.join('; ');
  const more = wheres.length - MAX_LISTED;
  return `${wheres.slice(0, MAX_LISTED).join('; ')}; and ${more} more like ${more === 1 ? 'it' : 'them'}`;
}

/** 0 when nothing is wrong, 1 when any problem was found. */
export function checkExitCode(report: CheckReport): 0 | 1 {
  return report.problems.length === 0 ? 0 : 1;
}

/** One problem as two lines; docker/entrypoint.sh prints the same format. */
export function formatProblem(p: CheckProblem): string {
  return p.fix === null ? `- ${p.where}: ${p.what}` : `- ${p.where}: ${p.what}\n  fix: ${p.fix}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The human report printed by `tunnel-manager check`. */
export function formatReport(report: CheckReport): string {
  const lines: string[] = [
    `config file:     ${report.configPath}`,
    `SSH config:      ${report.sshConfigPath ?? '(none: ssh uses its defaults)'}`,
    `SSH directory:   ${report.sshDir ?? '(none)'}`,
    `state directory: ${report.stateDir}`,
  ];
  if (report.tunnels.length > 0) {
    lines.push('', 'tunnels:');
    for (const t of report.tunnels) {
      const keys = t.identities.filter((i) => i.usable).map((i) => i.path);
      const auth = [...keys, ...(t.agent ? ['agent'] : [])];
      lines.push(
        `  ${t.name} (${t.hash.slice(0, 8)}): ${t.remote_host} -> ${t.user}@${t.hostname}:${t.port}` +
          `, keys: ${auth.length > 0 ? auth.join(', ') : 'none'}`,
      );
    }
  }
  if (report.notes.length > 0) {
    lines.push('', 'notes:', ...report.notes.map((n) => `  ${n}`));
  }
  if (report.warnings.length > 0) {
    lines.push('', `${plural(report.warnings.length, 'warning')} (ssh accepts these; the fix makes them private):`, ...report.warnings.map(formatProblem));
  }
  if (report.exposure.length > 0) {
    lines.push('', `${plural(report.exposure.length, 'exposure warning')} (these tunnels run as written, and open a port to more than this machine):`, ...report.exposure.map(formatProblem));
  }
  lines.push('');
  if (report.problems.length === 0) {
    lines.push(report.exposure.length === 0 ? 'no problems found' : `no problems found, but ${plural(report.exposure.length, 'exposure warning')} above`);
  } else {
    lines.push(`${plural(report.problems.length, 'problem')} found; run or do this, then check again:`);
    lines.push(...report.problems.map(formatProblem));
  }
  return lines.join('\n') + '\n';
}
