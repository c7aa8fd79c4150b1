/**
 * cac's help as both bins print it (tunnel-cli, tunnel-manager), without cac's defects:
 * the default command listed as a blank name with a `--help` line of its own, padding
 * left at the end of option lines, and a command's own `--help` that never says what
 * the command does. Pure: cac's sections and commands in, sections out.
 */

/** A section of cac's help, as cac hands them to a help callback. */
export interface HelpSection {
  title?: string;
  body: string;
}

/** What the help needs of a cac command. */
export interface HelpCommand {
  /** '' for the default command (the bin without a command). */
  name: string;
  rawName: string;
  description: string;
}

const NAME_COLUMN = 28;

/** `shown`: the command whose `--help` this is; undefined (or the default command) for the bin's own help. */
export function tidyHelp(sections: readonly HelpSection[], bin: string, commands: readonly HelpCommand[], shown: HelpCommand | undefined): HelpSection[] {
  // The default command is what the usage line's "[command]" may leave out; it is described by the command it equals.
  const named = commands.filter((c) => c.name !== '');
  // One long usage (tunnel-cli hash's) would push every description past the terminal's edge: it gets a line of its own.
  const width = Math.max(0, ...named.map((c) => c.rawName.length).filter((n) => n <= NAME_COLUMN));
  const line = (c: HelpCommand) =>
    c.rawName.length <= width ? `  ${c.rawName.padEnd(width)}  ${c.description}` : `  ${c.rawName}\n  ${' '.repeat(width)}  ${c.description}`;
  const out = sections.map((s): HelpSection => {
    if (s.title === 'Commands') return { ...s, body: named.map(line).join('\n') };
    if (s.title?.startsWith('For more info') === true) return { ...s, body: named.map((c) => `  $ ${bin} ${c.name} --help`).join('\n') };
    return s;
  });
  if (shown !== undefined && shown.name !== '' && shown.description !== '') {
    const usage = out.findIndex((s) => s.title === 'Usage');
    out.splice(usage + 1, 0, { body: `  ${shown.description}` });
  }
  return out.map((s) => ({ ...s, body: s.body.split('\n').map((l) => l.trimEnd()).join('\n') }));
}
