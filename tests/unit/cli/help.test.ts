import { describe, expect, it } from 'vitest';
import { tidyHelp, type HelpCommand, type HelpSection } from '../../../src/cli/help.js';

// The sections as cac builds them for a bin with a default command ('').
const commands: HelpCommand[] = [
  { name: '', rawName: '', description: 'run the daemon (same as serve)' },
  { name: 'serve', rawName: 'serve', description: 'run the daemon' },
  { name: 'hash', rawName: 'hash <name> <remote_host> <remote_port> <local_port> [direction] [interactive]', description: "a tunnel's hash" },
];
const sections: HelpSection[] = [
  { body: 'bin/1.0.0' },
  { title: 'Usage', body: '  $ bin [command] [options]' },
  { title: 'Commands', body: '         run the daemon (same as serve)\n  serve  run the daemon' },
  { title: 'For more info, run any command with the `--help` flag', body: '  $ bin --help\n  $ bin serve --help\n  $ bin hash --help' },
  { title: 'Options', body: '  --config <path>  the file \n  -h, --help       Display this message ' },
];

describe('tidyHelp', () => {
  it('lists no blank command and no --help line of the default command; a usage too long for the column gets a line of its own', () => {
    const out = tidyHelp(sections, 'bin', commands, undefined);
    expect(out.find((s) => s.title === 'Commands')?.body).toBe(
      "  serve  run the daemon\n  hash <name> <remote_host> <remote_port> <local_port> [direction] [interactive]\n         a tunnel's hash",
    );
    expect(out.find((s) => s.title?.startsWith('For more info'))?.body).toBe('  $ bin serve --help\n  $ bin hash --help');
  });

  it('leaves no white space at the ends of lines', () => {
    for (const s of tidyHelp(sections, 'bin', commands, undefined)) for (const l of s.body.split('\n')) expect(l).toBe(l.trimEnd());
  });

  it("a command's own help says what it does, after its usage; the bin's help (or the default command's) does not", () => {
    const own = tidyHelp(sections, 'bin', commands, commands[1]);
    expect(own.map((s) => s.title ?? s.body)).toEqual(['bin/1.0.0', 'Usage', '  run the daemon', 'Commands', 'For more info, run any command with the `--help` flag', 'Options']);
    expect(tidyHelp(sections, 'bin', commands, commands[0])).toHaveLength(sections.length);
  });
});
