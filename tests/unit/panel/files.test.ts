import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileState, saveBackup, versionOf, writeAtomic } from '../../../src/config-edit/file-io.js';
import { readSshHosts } from '../../../src/panel/ssh-hosts.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'tm-panel-'));

describe('reading the file with its version', () => {
  it('versions are the sha256 of the bytes; a missing file has its own', async () => {
    const dir = tmp();
    const path = join(dir, 'config.yaml');
    expect(await readFileState(path)).toEqual({ text: null, missing: true, version: 'missing', tooBig: null });
    writeFileSync(path, 'tunnels: []\n');
    const s = await readFileState(path);
    expect(s.version).toBe(versionOf('tunnels: []\n'));
    expect(s.text).toBe('tunnels: []\n');
    writeFileSync(path, 'tunnels: [] \n');
    expect((await readFileState(path)).version).not.toBe(s.version);
  });
  it('does not read a file over 1 MiB', async () => {
    const path = join(tmp(), 'config.yaml');
    writeFileSync(path, 'x'.repeat(1024 * 1024 + 1));
    const s = await readFileState(path);
    expect(s.text).toBeNull();
    expect(s.tooBig).toBe(1024 * 1024 + 1);
  });
});

describe('atomic write', () => {
  it('replaces the file, keeps its mode and leaves no temp file', async () => {
    const dir = tmp();
    const path = join(dir, 'config.yaml');
    writeFileSync(path, 'old\n');
    chmodSync(path, 0o640);
    expect(await writeAtomic(path, 'new\n', async () => true)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir)).toEqual(['config.yaml']);
  });
  it('creates a missing file', async () => {
    const path = join(tmp(), 'config.yaml');
    expect(await writeAtomic(path, 'a\n', async () => true)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('a\n');
  });
  it('writes nothing when the last check says the file changed meanwhile', async () => {
    const dir = tmp();
    const path = join(dir, 'config.yaml');
    writeFileSync(path, 'theirs\n');
    expect(await writeAtomic(path, 'mine\n', async () => false)).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('theirs\n');
    expect(readdirSync(dir)).toEqual(['config.yaml']);
  });
  it('writes through a symlink, keeping the link', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'c.yaml'), 'old\n');
    symlinkSync(join(dir, 'real', 'c.yaml'), join(dir, 'config.yaml'));
    await writeAtomic(join(dir, 'config.yaml'), 'new\n', async () => true);
    expect(lstatSync(join(dir, 'config.yaml')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'real', 'c.yaml'), 'utf8')).toBe('new\n');
  });
});

describe('backups', () => {
  it('keeps the newest ones only, private, and leaves other files alone', async () => {
    const dir = join(tmp(), 'backups');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    writeFileSync(join(dir, 'other.yaml.20200101T000000.000Z.bak'), 'another file');
    const t0 = Date.parse('2025-03-01T10:00:00.000Z');
    const paths: string[] = [];
    for (let i = 0; i < 15; i++) paths.push(await saveBackup(dir, '/cfg/config.yaml', `v${i}\n`, 10, new Date(t0 + Math.floor(i / 2) * 1000)));
    const ours = readdirSync(dir).filter((f) => f.startsWith('config.yaml.')).sort();
    expect(ours).toHaveLength(10);
    const kept = ours.map((f) => readFileSync(join(dir, f), 'utf8'));
    expect(kept.sort()).toEqual(['v10\n', 'v11\n', 'v12\n', 'v13\n', 'v14\n', 'v5\n', 'v6\n', 'v7\n', 'v8\n', 'v9\n']);
    expect(readdirSync(dir)).toContain('notes.txt');
    expect(readdirSync(dir)).toContain('other.yaml.20200101T000000.000Z.bak');
    expect(statSync(paths[14] as string).mode & 0o777).toBe(0o600);
  });
  it('creates its folder private', async () => {
    const dir = join(tmp(), 'a', 'backups');
    await saveBackup(dir, 'config.yaml', 'x', 10);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe('SSH config hosts', () => {
  it('reads Host aliases from the file and its Includes, sorted, without patterns', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'conf.d'));
    writeFileSync(join(dir, 'config'), 'Include conf.d/*.conf\nInclude missing\nHost bastion\n  HostName 10.0.0.1\nHost *\n  ServerAliveInterval 5\n');
    writeFileSync(join(dir, 'conf.d', 'a.conf'), 'Host db-a db-b\n');
    writeFileSync(join(dir, 'conf.d', 'b.txt'), 'Host ignored\n');
    expect(await readSshHosts(join(dir, 'config'), null)).toEqual(['bastion', 'db-a', 'db-b']);
    expect(await readSshHosts(join(dir, 'nope'), null)).toEqual([]);
    expect(await readSshHosts(null, null)).toEqual([]);
  });
});
