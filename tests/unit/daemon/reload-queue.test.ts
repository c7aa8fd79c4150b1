import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createConfigReload } from '../../../src/daemon/config-reload.js';
import { createReloadQueue } from '../../../src/daemon/reload-queue.js';
import type { SupervisorApi } from '../../../src/supervisor/types.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';

/** Rejections nobody handled while `fn` ran (and a few turns after), as the daemon's process would see them. */
async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const onUnhandled = (reason: unknown) => seen.push(reason);
  const before = process.listeners('unhandledRejection');
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', onUnhandled);
  try {
    await fn();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  } finally {
    process.removeListener('unhandledRejection', onUnhandled);
    for (const l of before) process.on('unhandledRejection', l as (...args: unknown[]) => void);
  }
  return seen;
}

function gate<T>() {
  let open!: (v: T) => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    open = res;
    fail = rej;
  });
  return { promise, open, fail };
}

describe('the reload queue: idle | running | running+queued', () => {
  test('a request during a run is folded into one follow-up that all waiting callers share', async () => {
    const gates = [gate<number>(), gate<number>()];
    let calls = 0;
    const q = createReloadQueue(() => gates[calls++]!.promise);
    const first = q.request();
    expect(q.state()).toBe('running');
    const second = q.request();
    const third = q.request();
    expect(q.state()).toBe('queued');
    gates[0]!.open(1);
    expect(await first).toBe(1);
    gates[1]!.open(2);
    expect(await second).toBe(2);
    expect(await third).toBe(2);
    expect(q.state()).toBe('idle');
  });

  test('a failed run does not stop the queued one, and each caller gets its own outcome', async () => {
    const gates = [gate<number>(), gate<number>()];
    let calls = 0;
    const q = createReloadQueue(() => gates[calls++]!.promise);
    const first = q.request();
    const second = q.request();
    gates[0]!.fail(new Error('first failed'));
    await expect(first).rejects.toThrow('first failed');
    gates[1]!.open(2);
    expect(await second).toBe(2);
  });

  test('a queued reload that fails raises no unhandled rejection when its callers handle it', async () => {
    const gates = [gate<number>(), gate<number>()];
    let calls = 0;
    const q = createReloadQueue(() => gates[calls++]!.promise);
    const seen = await unhandledDuring(async () => {
      const first = q.request();
      const queued = q.request();
      gates[0]!.open(1);
      await first;
      gates[1]!.fail(new Error('supervisor shut down'));
      await expect(queued).rejects.toThrow('supervisor shut down');
    });
    expect(seen).toEqual([]);
  });
});

describe('the config in force during shutdown', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tm-reload-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a queued reload that fails because the supervisor shut down does not crash the daemon', async () => {
    const path = join(dir, 'config.yaml');
    await writeFile(path, 'tunnels:\n  - remote_host: bastion\n    remote_port: 5432\n    local_port: 15432\n');
    const firstApply = gate<void>();
    let applies = 0;
    const supervisor = {
      async apply(tunnels: readonly TunnelSpec[]) {
        applies++;
        if (applies === 1) {
          await firstApply.promise;
          return { added: tunnels.map((t) => t.hash), removed: [], unchanged: [] };
        }
        throw new Error('the supervisor is shut down');
      },
    } as unknown as SupervisorApi;
    const engine = createConfigReload({ configPath: path, mode: 'default', supervisor, log: () => {} });
    const seen = await unhandledDuring(async () => {
      // The watcher and SIGHUP handlers catch what they start, as serve.ts and main.ts do.
      const first = engine.reload().catch((e: unknown) => e);
      const queued = engine.reload().catch((e: unknown) => e);
      firstApply.open();
      expect(await first).toMatchObject({ ok: true });
      expect(String(await queued)).toContain('the supervisor is shut down');
    });
    expect(seen).toEqual([]);
    expect(applies).toBe(2);
  });
});
