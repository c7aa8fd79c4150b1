import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { watchConfig, type ConfigWatcher } from '../../../src/config/watch.js';
import { arrivedByRename } from '../../../src/config/rename-arrival.js';

/** Long enough for any event of an earlier step to have arrived and been debounced. */
const SETTLE_MS = 800;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'config-watch-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Starts a watcher that records, at each call, what the file held (null: no file). */
async function watched(file: string, debounceMs?: number): Promise<{ seen: (string | null)[]; watcher: ConfigWatcher }> {
  const seen: (string | null)[] = [];
  const watcher = await watchConfig(file, () => seen.push(existsSync(file) ? readFileSync(file, 'utf8') : null), debounceMs === undefined ? {} : { debounceMs });
  cleanups.push(() => watcher.close());
  return { seen, watcher };
}

/** Waits for call number `n`, then checks that no further call follows. */
async function expectCalls(seen: readonly unknown[], n: number): Promise<void> {
  await waitFor(() => seen.length >= n, `${n} change call(s)`);
  await sleep(SETTLE_MS);
  expect(seen).toHaveLength(n);
}

describe('watchConfig', () => {
  test('a file created, changed in place and deleted: one call each, after the final state', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    const { seen } = await watched(file);

    writeFileSync(file, 'tunnels: []\n');
    await expectCalls(seen, 1);
    writeFileSync(file, 'tunnels: [] # edited\n');
    await expectCalls(seen, 2);
    unlinkSync(file);
    await expectCalls(seen, 3);
    expect(seen).toEqual(['tunnels: []\n', 'tunnels: [] # edited\n', null]);
  });

  test('an editor saving by rename over the file gives one call with the new content', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'version: 1\n');
    const { seen } = await watched(file);

    // What vim and most editors do: write a temp file beside it, then rename over.
    const temp = join(dir, '.config.yaml.swp');
    writeFileSync(temp, 'version: 2\n');
    renameSync(temp, file);
    await expectCalls(seen, 1);
    expect(seen).toEqual(['version: 2\n']);

    // And once more: the watch survives the replaced inode.
    writeFileSync(join(dir, 'config.yaml.tmp'), 'version: 3\n');
    renameSync(join(dir, 'config.yaml.tmp'), file);
    await expectCalls(seen, 2);
    expect(seen[1]).toBe('version: 3\n');
  });

  test('a file that does not exist at start is picked up when it appears', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    const { seen } = await watched(file);
    await sleep(300);
    expect(seen).toEqual([]);
    writeFileSync(file, 'tunnels: []\n');
    await expectCalls(seen, 1);
    expect(seen).toEqual(['tunnels: []\n']);
  });

  test('a half-written file is not reported when the rest follows within the debounce period', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'tunnels: []\n');
    const { seen } = await watched(file, 400);

    writeFileSync(file, 'tunnels:\n  - remote_host: ba');
    await sleep(50);
    appendFileSync(file, 'stion\n');
    await sleep(50);
    appendFileSync(file, '    remote_port: 5432\n');
    await expectCalls(seen, 1);
    expect(seen).toEqual(['tunnels:\n  - remote_host: bastion\n    remote_port: 5432\n']);
  });

  test('truncate-then-write, as some editors save, is one call', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'a: 1\n');
    const { seen } = await watched(file);
    writeFileSync(file, '');
    writeFileSync(file, 'a: 2\n');
    await expectCalls(seen, 1);
    expect(seen).toEqual(['a: 2\n']);
  });

  test('other files in the folder are ignored', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'tunnels: []\n');
    const { seen } = await watched(file);

    writeFileSync(join(dir, 'other.yaml'), 'x: 1\n');
    writeFileSync(join(dir, 'config.yaml.bak'), 'x: 1\n');
    writeFileSync(join(dir, '.config.yaml.swp'), 'x');
    appendFileSync(join(dir, 'other.yaml'), 'y: 2\n');
    renameSync(join(dir, 'other.yaml'), join(dir, 'renamed.yaml'));
    unlinkSync(join(dir, 'renamed.yaml'));
    mkdirSync(join(dir, 'backups'));
    writeFileSync(join(dir, 'backups', 'config.yaml'), 'x: 1\n');
    await sleep(SETTLE_MS);
    expect(seen).toEqual([]);

    // The watch is still alive for the file itself.
    writeFileSync(file, 'tunnels: [] # now\n');
    await expectCalls(seen, 1);
  });

  test('files coming and going beside the folder (a busy parent such as /tmp) cause no call, and a file of the same name there is not ours', async () => {
    const parent = tempDir();
    const dir = join(parent, 'config');
    mkdirSync(dir);
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'tunnels: []\n');
    const { seen } = await watched(file);

    for (let i = 0; i < 50; i++) writeFileSync(join(parent, `job-${i}.out`), 'x');
    writeFileSync(join(parent, 'config.yaml'), 'x: 1\n');
    mkdirSync(join(parent, 'configs'));
    renameSync(join(parent, 'job-0.out'), join(parent, 'job-0.done'));
    for (let i = 1; i < 50; i++) unlinkSync(join(parent, `job-${i}.out`));
    await sleep(SETTLE_MS);
    expect(seen).toEqual([]);

    writeFileSync(file, 'tunnels: [] # now\n');
    await expectCalls(seen, 1);
  });

  test('close() stops every call, even one already waiting for the debounce, and is idempotent', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    const { seen, watcher } = await watched(file, 300);
    writeFileSync(file, 'a: 1\n');
    await sleep(100);
    await watcher.close();
    await watcher.close();
    writeFileSync(file, 'a: 2\n');
    await sleep(SETTLE_MS);
    expect(seen).toEqual([]);
  });

  test('a folder that does not exist yet is followed into existence, level by level', async () => {
    const dir = join(tempDir(), 'later', 'config');
    const file = join(dir, 'config.yaml');
    const { seen } = await watched(file);
    mkdirSync(dirname(dir));
    mkdirSync(dir);
    writeFileSync(file, 'tunnels: []\n');
    await waitFor(() => seen.includes('tunnels: []\n'), 'the new file');
    writeFileSync(file, 'tunnels: [] # 2\n');
    await waitFor(() => seen.includes('tunnels: [] # 2\n'), 'a change of the new file');
  });

  test('a folder created with its file at once (mkdir -p, then write) is seen', async () => {
    const dir = join(tempDir(), 'a', 'b');
    const file = join(dir, 'config.yaml');
    const { seen } = await watched(file);
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, 'x: 1\n');
    await waitFor(() => seen.includes('x: 1\n'), 'the file');
  });

  test('a folder removed and created again is watched again', async () => {
    const dir = join(tempDir(), 'config');
    const file = join(dir, 'config.yaml');
    mkdirSync(dir);
    writeFileSync(file, 'x: 1\n');
    const { seen } = await watched(file);
    rmSync(dir, { recursive: true });
    await waitFor(() => seen.includes(null), 'the removal');
    mkdirSync(dir);
    writeFileSync(file, 'x: 2\n');
    await waitFor(() => seen.includes('x: 2\n'), 'the file in the new folder');
    writeFileSync(file, 'x: 3\n');
    await waitFor(() => seen.includes('x: 3\n'), 'a change in the new folder');
  });

  test('a folder removed and made again at once is watched again, by the watch itself (no safety poll)', async () => {
    const dir = join(tempDir(), 'config');
    const file = join(dir, 'config.yaml');
    mkdirSync(dir);
    writeFileSync(file, 'x: 1\n');
    const seen: (string | null)[] = [];
    const watcher = await watchConfig(file, () => seen.push(existsSync(file) ? readFileSync(file, 'utf8') : null), { safetyCheckMs: 3_600_000 });
    cleanups.push(() => watcher.close());
    rmSync(dir, { recursive: true });
    mkdirSync(dir);
    writeFileSync(file, 'x: 2\n');
    await waitFor(() => seen.includes('x: 2\n'), 'the file in the new folder');
    writeFileSync(file, 'x: 3\n');
    await waitFor(() => seen.includes('x: 3\n'), 'a change in the new folder');
  });

  test('a Kubernetes ConfigMap update (the ..data symlink swapped) is seen', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    mkdirSync(join(dir, '..2025_01'));
    writeFileSync(join(dir, '..2025_01', 'config.yaml'), 'version: 1\n');
    symlinkSync('..2025_01', join(dir, '..data'));
    symlinkSync('..data/config.yaml', file);
    const { seen } = await watched(file);

    mkdirSync(join(dir, '..2025_02'));
    writeFileSync(join(dir, '..2025_02', 'config.yaml'), 'version: 2\n');
    symlinkSync('..2025_02', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    rmSync(join(dir, '..2025_01'), { recursive: true });
    await waitFor(() => seen.length > 0, 'a call after the swap');
    expect(seen[seen.length - 1]).toBe('version: 2\n');
  });

  test('ConfigMap updates one after another and in a burst are seen by the watch itself (no safety poll)', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    let n = 0;
    let current: string | null = null;
    // The kubelet's steps: new folder, ..data_tmp renamed over ..data, old folder removed.
    const update = (text: string) => {
      const folder = `..2026_11_27_10_00_00.${100_000_000 + n++}`;
      mkdirSync(join(dir, folder));
      writeFileSync(join(dir, folder, 'config.yaml'), text);
      symlinkSync(folder, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      if (current === null) symlinkSync('..data/config.yaml', file);
      else rmSync(join(dir, current), { recursive: true });
      current = folder;
    };
    update('version: 0\n');
    const seen: (string | null)[] = [];
    const watcher = await watchConfig(file, () => seen.push(readFileSync(file, 'utf8')), { safetyCheckMs: 3_600_000 });
    cleanups.push(() => watcher.close());
    for (let i = 1; i <= 4; i++) {
      update(`version: ${i}\n`);
      await waitFor(() => seen.length >= i, `the call for update ${i}`);
      expect(seen[i - 1]).toBe(`version: ${i}\n`);
    }
    update('version: 5\n');
    update('version: 6\n');
    update('version: 7\n');
    await expectCalls(seen, 5);
    expect(seen[4]).toBe('version: 7\n');
  });
});

describe('a rename is a complete file: read at once (SPEC §14)', () => {
  /** Longer than any test here waits: a call that comes did not wait for the debounce. */
  const NEVER_MS = 600_000;

  test('a temp file renamed over the config is reported without the debounce, once', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'version: 1\n');
    const { seen } = await watched(file, NEVER_MS);
    for (let i = 2; i <= 4; i++) {
      writeFileSync(join(dir, `.config.yaml.${i}.tmp`), `version: ${i}\n`);
      renameSync(join(dir, `.config.yaml.${i}.tmp`), file);
      await waitFor(() => seen.length >= i - 1, `the call for version ${i}`);
      expect(seen[i - 2]).toBe(`version: ${i}\n`);
    }
  });

  test('a ConfigMap swap is reported without the debounce', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    mkdirSync(join(dir, '..v1'));
    writeFileSync(join(dir, '..v1', 'config.yaml'), 'version: 1\n');
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync('..data/config.yaml', file);
    const { seen } = await watched(file, NEVER_MS);
    mkdirSync(join(dir, '..v2'));
    writeFileSync(join(dir, '..v2', 'config.yaml'), 'version: 2\n');
    symlinkSync('..v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    rmSync(join(dir, '..v1'), { recursive: true });
    await waitFor(() => seen.length > 0, 'a call after the swap');
    expect(seen).toEqual(['version: 2\n']);
  });

  test('a file deleted and created anew in place, written in parts, keeps the debounce', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'tunnels: []\n');
    const { seen } = await watched(file, 400);
    unlinkSync(file);
    writeFileSync(file, 'tunnels:\n  - remote_host: ba');
    await sleep(50);
    appendFileSync(file, 'stion\n    remote_port: 5432\n');
    await expectCalls(seen, 1);
    expect(seen).toEqual(['tunnels:\n  - remote_host: bastion\n    remote_port: 5432\n']);
  });

  test("vim's save (probe file removed, old file renamed to a backup, new file written in place) keeps the debounce", async () => {
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'tunnels: []\n');
    const { seen } = await watched(file, 400);
    writeFileSync(join(dir, '4913'), '');
    unlinkSync(join(dir, '4913'));
    renameSync(file, `${file}~`);
    writeFileSync(file, 'tunnels:\n  - remote_host: ba');
    await sleep(50);
    appendFileSync(file, 'stion\n    remote_port: 5432\n');
    await expectCalls(seen, 1);
    expect(seen).toEqual(['tunnels:\n  - remote_host: bastion\n    remote_port: 5432\n']);
  });

  test('the rule: the target named last, arrived by rename right after its source left', () => {
    const names = new Set(['config.yaml', '..data']);
    const present = (...n: string[]) => (name: string) => n.includes(name);
    const ev = (type: string, name: string) => ({ type, name });
    // temp written, renamed over: arrived.
    expect(arrivedByRename([ev('rename', 't'), ev('change', 't'), ev('rename', 't'), ev('rename', 'config.yaml')], names, present('config.yaml'))).toBe(true);
    // the kubelet's swap, then the old folder removed.
    expect(arrivedByRename([ev('rename', '..data_tmp'), ev('rename', '..data'), ev('rename', '..v1')], names, present('..data', 'config.yaml'))).toBe(true);
    // created in place, then written: a write names it last.
    expect(arrivedByRename([ev('rename', 'x'), ev('rename', 'config.yaml'), ev('change', 'config.yaml')], names, present('config.yaml'))).toBe(false);
    // the target moved away right after a probe file was removed (vim's backup appears next).
    expect(arrivedByRename([ev('rename', '4913'), ev('rename', 'config.yaml'), ev('rename', 'config.yaml~')], names, present('config.yaml', 'config.yaml~'))).toBe(false);
    // a source that still exists was not moved (a new sibling, then the config created).
    expect(arrivedByRename([ev('rename', 'other'), ev('rename', 'config.yaml')], names, present('other', 'config.yaml'))).toBe(false);
    // the target gone (deleted): nothing arrived.
    expect(arrivedByRename([ev('rename', 't'), ev('rename', 'config.yaml')], names, present())).toBe(false);
    // alone, a change, or a pair of two watched names (..data then the config link created).
    expect(arrivedByRename([ev('rename', 'config.yaml')], names, present('config.yaml'))).toBe(false);
    expect(arrivedByRename([ev('change', 't'), ev('rename', 'config.yaml')], names, present('config.yaml'))).toBe(false);
    expect(arrivedByRename([ev('rename', '..data'), ev('rename', 'config.yaml')], names, present('..data', 'config.yaml'))).toBe(false);
    expect(arrivedByRename([ev('rename', 'a'), ev('rename', 'b')], names, present())).toBe(false);
  });
});
