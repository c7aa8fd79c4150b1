// What the daemon's reload says about a missing config file (SPEC §2): true words for
// a first start without a file, and for a file deleted after one ran.
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createConfigReload, missingFileMessage } from '../../../src/daemon/config-reload.js';
import type { SupervisorApi } from '../../../src/supervisor/types.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';

const supervisor = {
  async apply(tunnels: readonly TunnelSpec[]) {
    return { added: tunnels.map((t) => t.hash), removed: [], unchanged: [] };
  },
} as unknown as SupervisorApi;

const ONE = 'tunnels:\n  - remote_host: bastion\n    remote_port: 5432\n    local_port: 15432\n';

describe('a missing config file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tm-missing-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const engine = (path: string, logged: Record<string, unknown>[]) =>
    createConfigReload({ configPath: path, mode: 'default', supervisor, log: (e) => logged.push(e) });

  test('at the first start: no config has run, nothing "keeps running"; the absolute path and that the daemon watches for it', async () => {
    const path = join(dir, 'config', 'config.yaml');
    const logged: Record<string, unknown>[] = [];
    const record = await engine(path, logged).reload();
    expect(record.ok).toBe(false);
    expect(record.error).toBe(`${path} does not exist yet: no config has run, so no tunnel runs; the daemon watches ${join(dir, 'config')} and loads the file when it appears`);
    expect(record.error).not.toContain('last good');
    expect(logged.find((e) => e.event === 'reload')?.error).toBe(record.error);
    // Asked again (SIGHUP, a watcher event) before any file came: still none ran.
    expect((await engine(path, []).reload()).error).toContain('no config has run');
  });

  test('deleted after a file ran: that config keeps running, with how many tunnels, until the file is back', async () => {
    const path = join(dir, 'config.yaml');
    const e = engine(path, []);
    expect((await e.reload()).error).toContain('does not exist yet');
    await writeFile(path, ONE);
    expect((await e.reload()).ok).toBe(true);
    await unlink(path);
    const gone = await e.reload();
    expect(gone.error).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not exist: the config last applied at \\S+ keeps running \\(1 tunnel\\) until the file is back; the daemon watches `));
    expect(e.configHealth().missing).toBe(true);
    expect(e.tunnels()).toHaveLength(1);
  });

  test('an empty file that ran counts as a config that ran (with no tunnels)', async () => {
    const path = join(dir, 'config.yaml');
    const e = engine(path, []);
    await writeFile(path, '');
    expect((await e.reload()).ok).toBe(true);
    await unlink(path);
    expect((await e.reload()).error).toContain('keeps running (0 tunnels)');
  });

  test('the sentence, pure', () => {
    expect(missingFileMessage('/a/b.yaml', null)).toBe('/a/b.yaml does not exist yet: no config has run, so no tunnel runs; the daemon watches /a and loads the file when it appears');
    expect(missingFileMessage('/a/b.yaml', { at: 'T', tunnels: 3 })).toContain('keeps running (3 tunnels)');
  });
});
