import { describe, expect, test } from 'vitest';
import { guardText, MAX_CONFIG_BYTES, MAX_NESTING } from '../../src/config/guard.js';
import { parseConfigText } from '../../src/config/load.js';
import { problems, valid } from './config-helpers.js';

describe('size', () => {
  test('a file over 1 MiB is refused before parsing', () => {
    const text = `tunnels: []\n# ${'x'.repeat(MAX_CONFIG_BYTES)}\n`;
    const [p, ...rest] = problems(text);
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ line: 0, column: 0, field: '(file)', found: `${Buffer.byteLength(text)} bytes` });
    expect(p!.expected).toContain('1 MiB');
  });

  test('bytes are counted, not characters', () => {
    const text = `# ${'é'.repeat(MAX_CONFIG_BYTES / 2)}\n`;
    expect(text.length).toBeLessThan(MAX_CONFIG_BYTES);
    expect(problems(text)[0]!.expected).toContain('1 MiB');
  });

  test('a file just under the limit is read', () => {
    const text = `tunnels: []\n#${'x'.repeat(MAX_CONFIG_BYTES - 20)}\n`;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_CONFIG_BYTES);
    expect(valid(text).config.tunnels).toEqual([]);
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
    const ps = problems(text);
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ field: '(file)' });
    expect(ps[0]!.expected).toContain(`${MAX_NESTING} levels`);
    expect(ps[0]!.line).toBeGreaterThan(0);
    expect(guardText(text)).toMatch(/more than 64 levels/);
  });

  test('the position is where the limit was crossed', () => {
    const [p] = problems(`tunnels: []\nx: ${'['.repeat(1000)}`);
    expect(p).toMatchObject({ line: 2, column: 4 + MAX_NESTING - 2 });
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

describe('alias expansion bombs', () => {
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

  test('billion laughs is refused', () => {
    const ps = problems(laughs);
    const bomb = ps.find((p) => p.found.includes('alias bomb'));
    expect(bomb).toMatchObject({ field: '(file)', line: 2 });
  });

  test('the same bomb hidden inside a tunnel entry is refused', () => {
    const text = laughs.replace('tunnels: []', 'tunnels:\n  - remote_host: h\n    remote_port: 1\n    local_port: 2\n    direction: remote_to_local\n    extra: *i\n');
    expect(parseConfigText(text).kind).toBe('invalid');
  });
});
