import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { parseConfigText } from '../../../src/config/load.js';
import { fences } from '../cli-docs-blocks.js';

// `tunnel-manager migrate` as a user runs it: the built command on copies of the
// corpus files the reference wrote and YAML refuses.
const MAIN = join(import.meta.dirname, '../../../dist/main.js');
const CORPUS = join(import.meta.dirname, '../../fixtures/reference-configs');
const dir = mkdtempSync(join(tmpdir(), 'tm-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (e, stdout, stderr) => {
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const referenceHashes = (name: string) =>
  readFileSync(join(CORPUS, name.replace(/\.yaml$/, '.reference.tsv')), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t')[5]);

describe.each(['panel-written-names.yaml', 'tab-indentation.yaml'])('migrate %s', (name) => {
  const path = join(dir, name);
  copyFileSync(join(CORPUS, name), path);
  const original = readFileSync(path, 'utf8');

  test('YAML refuses the file as the reference wrote it', () => {
    expect(parseConfigText(original).kind).toBe('invalid');
  });

  test('without --write: the diff and the unchanged hashes are printed, the file is not touched', async () => {
    const r = await run(['migrate', '--config', path]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^--- ${path}\\n\\+\\+\\+ ${path} \\(migrated\\)\\n@@ -1,`));
    expect(r.stdout).toContain('Every tunnel has the hash the reference gave it.');
    expect(r.stdout).toContain('Nothing written; run again with --write');
    expect(readFileSync(path, 'utf8')).toBe(original);
  });

  test('--write: valid YAML with the reference hashes, a backup of the old text, and a second run has nothing to do', async () => {
    const r = await run(['migrate', '--config', path, '--write']);
    expect(r.code).toBe(0);
    const backup = /the previous text is in (.+\.bak)\.\n/.exec(r.stdout)?.[1];
    expect(backup).toBeDefined();
    expect(readFileSync(backup!, 'utf8')).toBe(original);
    const migrated = readFileSync(path, 'utf8');
    const loaded = parseConfigText(migrated);
    expect(loaded.kind).toBe('ok');
    if (loaded.kind === 'ok') expect(loaded.config.tunnels.map((t) => t.hash)).toEqual(referenceHashes(name));
    expect(migrated.split('\n')).toHaveLength(original.split('\n').length);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    const again = await run(['migrate', '--config', path, '--write']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('is valid YAML already; nothing to change.');
    expect(readFileSync(path, 'utf8')).toBe(migrated);
  });
});

test('the hashes the reference got wrong are listed with the reason', async () => {
  const path = join(dir, 'misread.yaml');
  copyFileSync(join(CORPUS, 'misread-by-reference.yaml'), path);
  const r = await run(['migrate', '--config', path]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('5 tunnels will have another hash than under the reference');
  expect(r.stdout).toMatch(/line 2, tunnel "db": hash 2e6d9d63 there → [0-9a-f]{8} here: name: the reference read "db # the main database", YAML reads "db"/);
  expect(r.stdout).toMatch(/line 6, tunnel "single": .*single quotes/);
});

test("a name the reference's panel wrote as *star (an alias with no anchor, for YAML) is repaired with the reference's hash; #1 primary is explained", async () => {
  // Rows of name-forms.yaml, whose hashes the reference's own parser computed (name-forms.reference.tsv).
  const rows = readFileSync(join(CORPUS, 'name-forms.reference.tsv'), 'utf8').split('\n').map((l) => l.split('\t'));
  const refHash = (port: string) => rows.find((r) => r[1] === port)?.[5];
  const path = join(dir, 'star.yaml');
  const text = [
    'tunnels:',
    '  - name: *star', '    remote_host: bastion', '    remote_port: 6009', '    local_port: 16009',
    '  - name: #1 primary', '    remote_host: bastion', '    remote_port: 6006', '    local_port: 16006',
    '  - name: ~', '    remote_host: bastion', '    remote_port: 6002', '    local_port: 16002',
    '',
  ].join('\n');
  writeFileSync(path, text);
  // The daemon refuses it as it is (the alias has no anchor), and says what repairs it.
  const refused = parseConfigText(text);
  if (refused.kind !== 'invalid') throw new Error(refused.kind);
  expect(refused.problems.map((p) => p.found).join('\n')).toContain('`tunnel-manager migrate` quotes it');
  const r = await run(['migrate', '--config', path, '--write']);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('-  - name: *star\n+  - name: "*star"\n');
  const star = refHash('6009')!;
  const primary = refHash('6006')!;
  expect(r.stdout).toContain(
    `line 6, tunnel "unnamed": hash ${primary.slice(0, 8)} there → `,
  );
  expect(r.stdout).toMatch(/YAML reads a value that starts with "#" as a comment, so the field is empty; the reference took the text as the value; scripts that stored [0-9a-f]{8} need [0-9a-f]{8}, or write name: "#1 primary" to keep the reference's value and hash/);
  const loaded = parseConfigText(readFileSync(path, 'utf8'));
  if (loaded.kind !== 'ok') throw new Error(loaded.kind);
  expect(loaded.config.tunnels.map((t) => [t.name, t.hash])).toEqual([
    ['*star', star],
    ['unnamed', expect.not.stringMatching(primary)],
    ['~', refHash('6002')],
  ]);
});

test('a file that cannot be repaired line by line is refused with where and why, and left alone', async () => {
  const path = join(dir, 'broken.yaml');
  const text = 'tunnels:\n  - name: ok\n    remote_host: bastion\n  ssh_options: [unclosed\n';
  writeFileSync(path, text);
  const r = await run(['migrate', '--config', path, '--write']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/cannot be turned into valid YAML line by line; fix this by hand first: line \d+, column \d+: /);
  expect(readFileSync(path, 'utf8')).toBe(text);
});

test('a missing file is an error naming it', async () => {
  const r = await run(['migrate', '--config', join(dir, 'nope.yaml')]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('nope.yaml: cannot be read (ENOENT)');
});

test("docs/config-migration.md: its example prints what the page shows", async () => {
  const page = readFileSync(join(import.meta.dirname, '../../../docs/config-migration.md'), 'utf8');
  const blocks = fences(page);
  const command = blocks.find((b) => b.lang === 'sh')!.body;
  const yaml = blocks.find((b) => b.lang === 'yaml')!.body;
  const output = blocks.find((b) => b.lang === 'text')!.body;
  expect(command).toBe('tunnel-manager migrate --config config/config.yaml');
  const cwd = mkdtempSync(join(tmpdir(), 'tm-migrate-doc-'));
  try {
    mkdirSync(join(cwd, 'config'));
    writeFileSync(join(cwd, 'config', 'config.yaml'), `${yaml}\n`);
    const r = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, [MAIN, ...command.split(' ').slice(1)], { cwd, env: { PATH: process.env.PATH ?? '' } }, (e, stdout) => resolve({ code: e ? 1 : 0, stdout }));
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${output}\n`);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
