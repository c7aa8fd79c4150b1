/**
 * Relative paths in the settings (SPEC §3, "Relative paths") are taken from the
 * working directory the command started in, once, where the settings are read: every
 * consumer (the daemon, `check`, the ssh it runs, the panel) then holds the same
 * absolute path. Left relative, a path means something else to each: ssh reads a
 * relative `Include` from ~/.ssh, and a panel started elsewhere edits another file.
 * Pure: the caller passes the working directory and home.
 */

/** Where relative paths start from, and what a leading `~` means. */
export interface PathBase {
  cwd: string;
  home: string;
}

/** `path` made absolute against `base.cwd` (`~/…` against home), `.` and `..` resolved as `path.resolve` does. */
export function absolutePath(path: string, base: PathBase): string {
  const expanded = path === '~' ? base.home : path.startsWith('~/') ? `${base.home}${path.slice(1)}` : path;
  const full = expanded.startsWith('/') ? expanded : `${base.cwd}/${expanded}`;
  const parts: string[] = [];
  for (const part of full.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/**
 * A program named with a folder (`./bin/ssh`) made absolute; a bare name (`ssh`) is
 * left to PATH, as a shell would.
 */
export function absoluteProgram(program: string, base: PathBase): string {
  return program.includes('/') ? absolutePath(program, base) : program;
}
