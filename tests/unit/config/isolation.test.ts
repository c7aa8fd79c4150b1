import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseConfigText } from '../../../src/config/load.js';
import { createConfigReload } from '../../../src/daemon/config-reload.js';
import type { SupervisorApi } from '../../../src/supervisor/types.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';

const entry = (name: string, local: number, extra = '') => `  - name: ${name}\n    remote_host: bastion\n    remote_port: 5432\n    local_port: ${local}\n${extra}`;

describe('one bad entry never takes the others down', () => {
  test.each([
    ['a missing field', '  - name: broken\n    remote_host: bastion\n    local_port: 3\n', 'tunnels[1].remote_port'],
    ['an invalid field', entry('broken', 70000), 'tunnels[1].local_port'],
    ['the same hash as an earlier entry', entry('a', 1), 'tunnels[1]'],
    ['a listen address an earlier entry uses', entry('other', 1), 'tunnels[1].local_port'],
    ['a duplicate key', '  - name: broken\n    name: again\n    remote_host: bastion\n    remote_port: 1\n    local_port: 4\n', 'tunnels[1].name'],
  ])('%s: the entry is left out with line and column, the others load', (_what, bad, field) => {
    const r = parseConfigText(`tunnels:\n${entry('a', 1)}${bad}${entry('c', 2)}`);
    expect(r.kind).toBe('partial');
    if (r.kind !== 'partial') return;
    expect(r.config.tunnels.map((t) => t.name)).toEqual(['a', 'c']);
    expect(r.rejected).toHaveLength(1);
    expect(r.rejected[0]).toMatchObject({ index: 1, line: 6, column: 5 });
    expect(r.rejected[0]!.problems.map((p) => p.field)).toContain(field);
    expect(r.problems.every((p) => p.line > 0 && p.column > 0)).toBe(true);
  });

  test('an entry that is not a map is left out too', () => {
    const r = parseConfigText(`tunnels:\n${entry('a', 1)}  - just text\n`);
    expect(r.kind === 'partial' && r.rejected[0]).toMatchObject({ index: 1, name: null, line: 6, column: 5 });
  });

  test('a proxy section with problems leaves the tunnels running and the proxy out', () => {
    const r = parseConfigText(`tunnels:\n${entry('a', 1)}proxy: { default_timeout: 0 }\n`);
    expect(r.kind).toBe('partial');
    if (r.kind === 'partial') {
      expect(r.proxyValid).toBe(false);
      expect(r.config.tunnels).toHaveLength(1);
      expect(r.rejected).toEqual([]);
    }
  });

  test.each([
    ['not YAML', 'tunnels:\n  - name: [unclosed\n'],
    ['not a map', '- a\n- b\n'],
    ['tunnels not a list', 'tunnels: 3\n'],
    ['a refused shared ssh option', `tunnels:\n${entry('a', 1)}ssh_options:\n  ProxyCommand: nc %h %p\n`],
  ])('%s: nothing in the file is usable', (_what, text) => {
    expect(parseConfigText(text).kind).toBe('invalid');
  });
});

describe('the daemon applies a file with problems without stopping or changing anything', () => {
  let dir: string;
  let path: string;
  let applied: TunnelSpec[][];
  const supervisor = {
    async apply(tunnels: readonly TunnelSpec[]) {
      const before = new Set((applied.at(-1) ?? []).map((t) => t.hash));
      applied.push([...tunnels]);
      const now = new Set(tunnels.map((t) => t.hash));
      return {
        added: tunnels.filter((t) => !before.has(t.hash)).map((t) => t.hash),
        removed: [...before].filter((h) => !now.has(h)),
        unchanged: tunnels.filter((t) => before.has(t.hash)).map((t) => t.hash),
      };
    },
  } as unknown as SupervisorApi;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tm-isolation-'));
    path = join(dir, 'config.yaml');
    applied = [];
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('at first start the valid entries run; on reload new valid entries start, nothing running stops or changes', async () => {
    const engine = createConfigReload({ configPath: path, mode: 'default', supervisor, log: () => {} });
    await writeFile(path, `tunnels:\n${entry('a', 1)}${entry('broken', 70000)}${entry('b', 2, '    ssh_options: { ServerAliveInterval: 5 }\n')}`);
    const first = await engine.reload();
    expect(first).toMatchObject({ ok: true, left_out: 1 });
    expect(engine.tunnels().map((t) => t.name)).toEqual(['a', 'b']);
    expect(engine.configHealth()).toMatchObject({ valid: false, applied: 'partial', held: [] });
    expect(engine.configHealth().rejected.map((r) => [r.index, r.line, r.name])).toEqual([[1, 6, 'broken']]);

    // a removed, b's options changed, c added, and one entry still broken.
    await writeFile(path, `tunnels:\n${entry('broken', 70000)}${entry('b', 2, '    ssh_options: { ServerAliveInterval: 9 }\n')}${entry('c', 3)}`);
    const second = await engine.reload();
    expect(second.removed).toEqual([]);
    expect(second.added).toHaveLength(1);
    const byName = new Map(engine.tunnels().map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(['a', 'b', 'c']);
    expect(byName.get('b')!.ssh_options.ServerAliveInterval).toBe('5');
    expect(engine.configHealth().held).toEqual([byName.get('a')!.hash]);

    // A file without problems applies everything, removals and changes included.
    await writeFile(path, `tunnels:\n${entry('b', 2, '    ssh_options: { ServerAliveInterval: 9 }\n')}${entry('c', 3)}`);
    const third = await engine.reload();
    expect(third).toMatchObject({ ok: true, left_out: 0, removed: [byName.get('a')!.hash] });
    expect(engine.tunnels().find((t) => t.name === 'b')!.ssh_options.ServerAliveInterval).toBe('9');
    expect(engine.configHealth()).toMatchObject({ valid: true, applied: 'all', held: [], rejected: [] });
  });

  test('a file caught empty while it is rewritten in place stops nothing; one that stays empty is applied', async () => {
    const engine = createConfigReload({ configPath: path, mode: 'default', supervisor, log: () => {}, emptySettleMs: 1000 });
    const full = `tunnels:\n${entry('a', 1)}${entry('b', 2)}`;
    await writeFile(path, full);
    await engine.reload();
    // Truncated (the first half of a rewrite in place) when the reload reads it; written while it waits.
    await writeFile(path, '');
    const rewritten = new Promise<void>((resolve) => setTimeout(() => void writeFile(path, full).then(resolve), 20));
    const r = await engine.reload();
    await rewritten;
    expect(r).toMatchObject({ ok: true, removed: [] });
    expect(engine.tunnels().map((t) => t.name)).toEqual(['a', 'b']);
    expect(applied.every((set) => set.length === 2)).toBe(true);
    // Emptied on purpose: once it stayed empty, every tunnel stops.
    await writeFile(path, '');
    const emptied = await engine.reload();
    expect(emptied.removed).toHaveLength(2);
    expect(engine.tunnels()).toEqual([]);
  });

  test('a new entry that would listen where a kept tunnel listens waits, reported, until the file has no problems', async () => {
    const engine = createConfigReload({ configPath: path, mode: 'default', supervisor, log: () => {} });
    await writeFile(path, `tunnels:\n${entry('a', 1)}`);
    await engine.reload();
    const a = engine.tunnels()[0]!;
    // a renamed (a new hash on the same port) while another entry is broken.
    await writeFile(path, `tunnels:\n${entry('renamed', 1)}${entry('broken', 70000)}`);
    const r = await engine.reload();
    expect(r).toMatchObject({ added: [], removed: [], left_out: 2 });
    expect(engine.tunnels().map((t) => t.name)).toEqual(['a']);
    const health = engine.configHealth();
    expect(health.held).toEqual([a.hash]);
    expect(health.rejected.map((x) => [x.index, x.name, x.line])).toEqual([
      [0, 'renamed', 2],
      [1, 'broken', 6],
    ]);
    expect(health.rejected[0]!.problems[0]).toMatchObject({ field: 'tunnels[0].local_port', line: 2, column: 5 });
    expect(health.rejected[0]!.problems[0]!.found).toContain(`where the running tunnel "a" (${a.hash.slice(0, 8)}) listens`);
    await writeFile(path, `tunnels:\n${entry('renamed', 1)}`);
    const fixed = await engine.reload();
    expect(fixed).toMatchObject({ removed: [a.hash], left_out: 0 });
    expect(engine.tunnels().map((t) => t.name)).toEqual(['renamed']);
  });

  test('a file that is not YAML changes nothing', async () => {
    const engine = createConfigReload({ configPath: path, mode: 'default', supervisor, log: () => {} });
    await writeFile(path, `tunnels:\n${entry('a', 1)}`);
    await engine.reload();
    await writeFile(path, 'tunnels: [\n');
    const r = await engine.reload();
    expect(r).toMatchObject({ ok: false, added: [], removed: [] });
    expect(applied).toHaveLength(1);
    expect(engine.configHealth()).toMatchObject({ valid: false, applied: 'none' });
  });
});
