// The one YAML loader (src/config/yaml-loader.ts): its limits, where they are told,
// that what it reads is what the yaml package reads, and that no text within the size
// limit costs more than 150 MB or minutes, through the daemon's, the panel's and
// migrate's readings alike.
import { parseDocument } from 'yaml';
import { describe, expect, test } from 'vitest';
import { readEntries } from '../../../src/config-edit/read-entries.js';
import { parseEditable } from '../../../src/config-edit/yaml-doc.js';
import { parseConfigText } from '../../../src/config/load.js';
import { migrate } from '../../../src/config/migrate.js';
import { loadYaml, MAX_ANCHORS_AND_ALIASES, MAX_CONFIG_BYTES, MAX_EXPANDED_NODES, MAX_LINES, MAX_NESTING, MAX_TOKENS, refusalText } from '../../../src/config/yaml-loader.js';
import { problems, valid } from './helpers.js';
import { HOSTILE_FILES } from './hostile-yaml.js';

/** The one problem of a file refused whole. */
function refusal(text: string) {
  const ps = problems(text);
  expect(ps).toHaveLength(1);
  expect(ps[0]).toMatchObject({ field: '(file)' });
  return ps[0]!;
}

const MiB = 1024 * 1024;

describe('size', () => {
  test('a file over 1 MiB is refused before parsing', () => {
    const text = `tunnels: []\n# ${'x'.repeat(MAX_CONFIG_BYTES)}\n`;
    const p = refusal(text);
    expect(p).toMatchObject({ line: 0, column: 0, found: `${Buffer.byteLength(text)} bytes` });
    expect(p.expected).toBe('a file of at most 1048576 bytes (1 MiB)');
  });

  test('bytes are counted, not characters', () => {
    const text = `# ${'é'.repeat(MAX_CONFIG_BYTES / 2)}\n`;
    expect(text.length).toBeLessThan(MAX_CONFIG_BYTES);
    expect(refusal(text).expected).toContain('1 MiB');
  });

  test('a file of exactly the limit is read; one byte more is not', () => {
    const head = 'tunnels: []\n#';
    const text = `${head}${'x'.repeat(MAX_CONFIG_BYTES - head.length - 1)}\n`;
    expect(Buffer.byteLength(text)).toBe(MAX_CONFIG_BYTES);
    expect(valid(text).config.tunnels).toEqual([]);
    expect(refusal(`${text} `).found).toBe(`${MAX_CONFIG_BYTES + 1} bytes`);
  });
});

describe('nesting is refused before the parser can exhaust memory', () => {
  test.each([
    ['100,000 [', '['.repeat(100_000)],
    ['100,000 [ under a key', `tunnels: ${'['.repeat(100_000)}`],
    ['100,000 {', `a: ${'{a: '.repeat(100_000)}`],
    ['100,000 compact sequences', `${'- '.repeat(100_000)}x\n`],
    ['100,000 explicit keys', `${'? '.repeat(100_000)}x\n`],
    ['deep indentation', Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')],
    ['deep indentation behind anchors and tags', Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i)}&a${i} !t a:`).join('\n')],
    // A quote inside a plain scalar is text; it must not hide what follows from the guard.
    ["an apostrophe in a plain scalar, then 100,000 [", `name: it's\nx: ${'['.repeat(100_000)}`],
    ['a # inside a plain scalar, then 100,000 [', `name: a#b\nx: ${'['.repeat(100_000)}`],
  ])('%s', (_name, text) => {
    const p = refusal(text);
    expect(p.expected).toBe(`collections nested at most ${MAX_NESTING} levels deep`);
    expect(p.line).toBeGreaterThan(0);
  });

  test('the position is where the limit was crossed', () => {
    expect(refusal(`tunnels: []\nx: ${'['.repeat(1000)}`)).toMatchObject({ line: 2, column: 4 + MAX_NESTING - 2 });
  });

  test(`${MAX_NESTING} levels are read, one more is not`, () => {
    // The map holding x is a level, and so is the place of x's value in it, before the lists.
    const at = (levels: number) => `x: ${'['.repeat(levels - 2)}${']'.repeat(levels - 2)}\ntunnels: []\n`;
    valid(at(MAX_NESTING));
    expect(refusal(at(MAX_NESTING + 1)).expected).toContain(`${MAX_NESTING} levels`);
  });

  test('brackets in quotes, comments and block scalars do not count', () => {
    const many = '['.repeat(200);
    const { warnings } = valid(`tunnels: []
a: "${many}"
b: '${many}'
# ${many}
c: |
  ${many}
d: x${many}
`);
    expect(warnings.map((w) => w.field)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('ordinary nesting well under the limit is accepted', () => {
    valid(`x: ${'['.repeat(30)}${']'.repeat(30)}\ntunnels: []\n`);
    valid(`x: ${'- '.repeat(30)}y\ntunnels: []\n`.replace('x: -', 'x:\n  -'));
  });
});

describe('tokens and lines', () => {
  // `x` `:` are 2 tokens, each `- 1` item 2 more, a lone `-` one.
  const list = (items: number, extra = '') => `x:\n${'- 1\n'.repeat(items)}${extra}`;

  test(`${MAX_TOKENS} tokens are read, one more is refused where it stands`, () => {
    const items = (MAX_TOKENS - 2) / 2;
    expect(loadYaml(list(items)).ok).toBe(true);
    const over = loadYaml(list(items, '-\n'));
    expect(!over.ok && over.error).toEqual({ line: items + 2, column: 1, expected: `at most ${MAX_TOKENS} YAML tokens in the file (values, keys, anchors, aliases, tags and the - ? : , [ ] { } marks)`, found: 'more, from here on (refused before parsing, to protect memory)' });
  });

  test('a valid file of 60-deep empty lists (the one that took the daemon to 1.5 GB) is refused, saying where', () => {
    const p = refusal(HOSTILE_FILES.find(([n]) => n === 'valid 60-deep empty lists')![1]);
    // `- ` and 120 brackets make 121 tokens a line, after `x` `:` on the first.
    const line = Math.ceil((MAX_TOKENS + 1 - 2) / 121) + 1;
    expect(p).toMatchObject({ line, expected: expect.stringContaining('tokens') });
  });

  test(`${MAX_LINES} lines are read, one more is refused`, () => {
    expect(loadYaml(`${'\n'.repeat(MAX_LINES - 1)}a: 1\n`).ok).toBe(true);
    const over = loadYaml(`${'\n'.repeat(MAX_LINES)}a: 1`);
    expect(!over.ok && over.error).toEqual({ line: MAX_LINES + 1, column: 1, expected: `at most ${MAX_LINES} lines`, found: 'more, from here on (refused before parsing, to protect memory)' });
  });

  test('the lines of a block scalar count too (one token, but the parser records each)', () => {
    const text = `tunnels: []\nnote: |\n${'  x\n'.repeat(MAX_LINES)}`;
    expect(text.length).toBeLessThan(MAX_CONFIG_BYTES);
    expect(refusal(text)).toMatchObject({ line: MAX_LINES + 1, column: 1, expected: `at most ${MAX_LINES} lines` });
  });
});

describe('anchors and aliases', () => {
  const aliases = (n: number) => `a: &a x\nb: [${'*a,'.repeat(n - 1)}*a]\ntunnels: []\n`;

  test(`${MAX_ANCHORS_AND_ALIASES} anchors and aliases are read, one more is refused where it stands`, () => {
    // One anchor, the rest aliases.
    valid(aliases(MAX_ANCHORS_AND_ALIASES - 1));
    expect(refusal(aliases(MAX_ANCHORS_AND_ALIASES))).toMatchObject({ line: 2, column: 5 + 3 * (MAX_ANCHORS_AND_ALIASES - 1), expected: `at most ${MAX_ANCHORS_AND_ALIASES} anchors (&name) and aliases (*name) in the file` });
  });

  test('350,000 aliases (refused only after 583 MB before) are refused at the first one over', () => {
    expect(refusal(HOSTILE_FILES.find(([n]) => n.startsWith('350,000 aliases'))![1])).toMatchObject({ line: 2, column: 5 + 3 * (MAX_ANCHORS_AND_ALIASES - 1) });
  });

  const laughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
tunnels: []
`;

  test('billion laughs is refused at the alias that takes the data past the limit', () => {
    // e stands for 66,430 nodes; the first *e in f brings the data past 100,000.
    expect(refusal(laughs)).toMatchObject({ line: 6, column: 8, expected: `aliases that expand the data to at most ${MAX_EXPANDED_NODES} nodes in all`, found: expect.stringMatching(/^\*e, .*alias expansion bomb/) });
  });

  test('the same bomb hidden inside a tunnel entry is refused, by the panel too', () => {
    const text = laughs.replace('tunnels: []', 'tunnels:\n  - remote_host: h\n    remote_port: 1\n    local_port: 2\n    direction: remote_to_local\n    extra: *i\n');
    expect(parseConfigText(text).kind).toBe('invalid');
    const edit = parseEditable(text);
    expect(!edit.ok && edit.error).toMatch(/line 6, column 8: expected aliases that expand/);
  });

  test('what an alias expands to is counted to the node: under the limit read, over it refused', () => {
    const shared = (uses: number) => `a: &a [${'x,'.repeat(999)}x]\nb: [${'*a,'.repeat(uses - 1)}*a]\ntunnels: []\n`;
    valid(shared(90));
    expect(refusal(shared(110)).expected).toContain(`${MAX_EXPANDED_NODES} nodes`);
  });

  test('an alias inside the node it names is refused, as it never ends', () => {
    expect(refusal('a: &a\n  b: *a\ntunnels: []\n')).toMatchObject({ line: 2, column: 6, found: '*a inside the node &a names, which would expand without end' });
  });

  test('one anchor merged into 150 tunnels is read (the package\'s own count refused it past 99)', () => {
    const entries = Array.from({ length: 150 }, (_, i) => `  - <<: *d\n    name: t${i}\n    local_port: ${2000 + i}\n`).join('');
    const { config } = valid(`defaults: &d\n  remote_host: user@h\n  remote_port: 1\ntunnels:\n${entries}`);
    expect(config.tunnels).toHaveLength(150);
    expect(config.tunnels[149]).toMatchObject({ name: 't149', remote_host: 'user@h' });
  });
});

describe('what the loader reads is what the yaml package reads', () => {
  test.each([
    ['block map', 'a: 1\nb: 2\na: 3\n'],
    ['flow map', 'x: {a: 1, b: 2, a: 3, a: 4}\n'],
    ['nested', 'tunnels:\n  - name: a\n    name: b\n  - {name: c, name: d}\n'],
    ['numbers as keys', '1: a\n1.0: b\n0x1: c\n"1": d\n'],
    ['null keys', '~: a\nnull: b\nNULL: c\n'],
    ['NaN and booleans', '.nan: a\n.nan: b\ntrue: c\nTrue: d\n'],
    ['anchored keys', '&k a: 1\n*k : 2\na: 3\n'],
    ['a syntax error and a repeated key', 'a: 1\na: 2\nb: [\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
  ])('errors and their places: %s', (_name, text) => {
    const ours = loadYaml(text, { logLevel: 'silent' });
    if (!ours.ok) throw new Error(refusalText(ours.error));
    const theirs = parseDocument(text, { prettyErrors: false, logLevel: 'warn' });
    const show = (es: readonly { code: string; pos: [number, number] }[]) => es.map((e) => `${e.code}@${e.pos[0]}`).sort();
    expect(show(ours.value.doc.errors)).toEqual(show(theirs.errors));
    expect(ours.value.doc.toJS()).toEqual(theirs.toJS());
  });

  test('messages carry their place when asked, as prettyErrors writes the first line', () => {
    const ours = loadYaml('a: 1\na: 2\n', { positions: true });
    // Without the colon that prettyErrors puts before the quoted line.
    expect(ours.ok && ours.value.doc.errors[0]?.message).toBe(parseDocument('a: 1\na: 2\n').errors[0]?.message.split('\n')[0]?.replace(/:$/, ''));
  });

  test('a repeated key in a map of 16,000 keys is found once, where it is, and named', () => {
    const text = `tunnels: []\nx:\n${Array.from({ length: 16_000 }, (_, i) => `  k${i}: 1\n`).join('')}  k7: 2\n`;
    const ps = problems(text);
    expect(ps).toEqual([{ line: 16_003, column: 3, field: 'x.k7', expected: 'each key at most once in a map', found: '"k7" again (first at line 10, column 3)' }]);
  });

  test('100,000 stray ] are 100 problems and one that counts the rest', () => {
    const ps = problems(']\n'.repeat(20_000));
    expect(ps).toHaveLength(101);
    expect(ps[100]).toMatchObject({ line: 101, column: 1, found: '19900 more syntax errors from here on (the first 100 are listed)' });
  });
});

describe('no file within the size limit costs more than 150 MB, through any reading', () => {
  /** Memory grown while `run` works and what it returns is still held: the heap, or the process's resident set if that grew more. */
  function growth(run: () => unknown): { mb: number; kept: unknown } {
    const before = process.memoryUsage();
    const kept = run();
    const after = process.memoryUsage();
    return { mb: Math.max(after.heapUsed - before.heapUsed, after.rss - before.rss) / MiB, kept };
  }

  test.each(HOSTILE_FILES)('%s', (_name, text) => {
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_CONFIG_BYTES);
    const readings: [string, () => unknown][] = [
      ['the daemon', () => parseConfigText(text)],
      ['the panel', () => [parseEditable(text), readEntries(text)]],
      ['migrate', () => migrate(text)],
    ];
    for (const [who, run] of readings) {
      const { mb, kept } = growth(run);
      expect(kept).toBeDefined();
      expect(mb, `${who}: ${Math.round(mb)} MB`).toBeLessThan(150);
    }
  }, 60_000);
});
