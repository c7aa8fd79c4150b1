import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { MAX_CONFIG_BYTES } from '../../../src/config/yaml-loader.js';
import { formatProblem, loadConfigFile } from '../../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'config-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

const TWO_LISTENING_HERE_IN_DEFAULT_MODE = `tunnels:
  - { name: a, remote_host: h, remote_port: 1, local_port: 7000, direction: remote_to_local }
  - { name: b, remote_host: h, remote_port: 2, local_port: 7000, direction: remote_to_local }
`;

describe('loadConfigFile', () => {
  test('a file that does not exist is missing, not an error', async () => {
    expect(await loadConfigFile(join(dir, 'nope.yaml'))).toEqual({ kind: 'missing' });
  });

  test('a dangling symlink is missing too', async () => {
    const link = join(dir, 'dangling.yaml');
    symlinkSync(join(dir, 'gone.yaml'), link);
    expect(await loadConfigFile(link)).toEqual({ kind: 'missing' });
  });

  test('a valid file is read and validated', async () => {
    const r = await loadConfigFile(file('ok.yaml', 'tunnels:\n  - { remote_host: h, remote_port: 1, local_port: 2, direction: remote_to_local }\n'));
    expect(r.kind).toBe('ok');
    expect(r.kind === 'ok' && r.config.tunnels.map((t) => t.remote_host)).toEqual(['h']);
  });

  test('an empty file is a valid empty config', async () => {
    expect(await loadConfigFile(file('empty.yaml', ''))).toEqual({ kind: 'ok', config: { tunnels: [], proxy: null }, warnings: [] });
  });

  test('a directory is invalid, with the problem at line 0', async () => {
    const d = join(dir, 'a-dir.yaml');
    mkdirSync(d);
    const r = await loadConfigFile(d);
    expect(r).toEqual({ kind: 'invalid', problems: [{ line: 0, column: 0, field: '(file)', expected: 'a file', found: 'a directory' }] });
    expect(r.kind === 'invalid' && formatProblem(r.problems[0]!)).toBe('(file): expected a file, found a directory');
  });

  test('a FIFO is refused without blocking on it', async () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    const r = await loadConfigFile(fifo);
    expect(r.kind === 'invalid' && r.problems[0]).toMatchObject({ line: 0, expected: 'a regular file' });
  });

  test('a file over 1 MiB is refused before it is read', async () => {
    const r = await loadConfigFile(file('big.yaml', Buffer.alloc(MAX_CONFIG_BYTES + 10, 0x23)));
    expect(r.kind === 'invalid' && r.problems).toEqual([
      { line: 0, column: 0, field: '(file)', expected: 'a file of at most 1048576 bytes (1 MiB)', found: `${MAX_CONFIG_BYTES + 10} bytes` },
    ]);
  });

  test('bytes that are not UTF-8 are refused', async () => {
    const r = await loadConfigFile(file('latin1.yaml', Buffer.from([0x74, 0x3a, 0x20, 0xe9, 0x0a])));
    expect(r.kind === 'invalid' && r.problems[0]).toMatchObject({ line: 0, expected: 'UTF-8 text' });
  });

  test('an unreadable path is invalid, naming the error', async () => {
    const r = await loadConfigFile(join(file('plain', 'x'), 'config.yaml'));
    expect(r.kind === 'invalid' && r.problems[0]).toMatchObject({ line: 0, expected: 'a readable file' });
    expect(r.kind === 'invalid' && r.problems[0]!.found).toContain('ENOTDIR');
  });

  test('an invalid entry gives problems with positions', async () => {
    const r = await loadConfigFile(file('bad.yaml', 'tunnels:\n  - remote_host: "a b"\n'));
    expect(r.kind).toBe('partial');
    expect(r.kind === 'partial' && r.problems.map(formatProblem)).toContain(
      'line 2, column 18: tunnels[0].remote_host: expected an ssh destination: a Host alias, host name or address, optionally as user@host (an IPv6 address without brackets, as ssh takes it: ::1, user@::1), without white space, not starting with "-", found "a b", which holds white space',
    );
  });

  test('the direction mode is passed on to the listen-conflict check', async () => {
    const p = file('modes.yaml', TWO_LISTENING_HERE_IN_DEFAULT_MODE);
    expect((await loadConfigFile(p)).kind).toBe('partial');
    expect((await loadConfigFile(p, { mode: 'default' })).kind).toBe('partial');
    expect((await loadConfigFile(p, { mode: 'ssh-standard' })).kind).toBe('ok');
  });
});
