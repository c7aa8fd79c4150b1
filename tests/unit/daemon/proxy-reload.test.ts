import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadConfigFile } from '../../../src/config/load.js';
import type { LoadResult } from '../../../src/config/types.js';
import { createProxyReload } from '../../../src/daemon/proxy-reload.js';
import type { DirectionMode } from '../../../src/tunnel/spec.js';

const proxyFile = (prefix: string) => `proxy:\n  providers:\n    ${prefix}:\n      base_url: http://127.0.0.1:9/v1\n`;

describe('the reload of tunnel-manager proxy', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tm-proxy-reload-'));
    path = join(dir, 'config.yaml');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('two changes during a slow reload make exactly one more reload, of the latest file, never beside it', async () => {
    await writeFile(path, proxyFile('first'));
    let openFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (openFirst = r));
    let loads = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const load = async (p: string, opts: { mode: DirectionMode }): Promise<LoadResult> => {
      loads++;
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        const r = await loadConfigFile(p, opts);
        if (loads === 1) await firstHeld;
        return r;
      } finally {
        inFlight--;
      }
    };
    const logged: Record<string, unknown>[] = [];
    const reload = createProxyReload({ configPath: path, mode: 'default', log: (e) => logged.push(e), load });

    const first = reload.reload();
    // What the watcher and SIGHUP do on each change while the first reload is held.
    await writeFile(path, proxyFile('second'));
    const second = reload.reload();
    await writeFile(path, proxyFile('third'));
    const third = reload.reload();
    expect(loads).toBe(1);

    openFirst();
    await Promise.all([first, second, third]);
    expect(loads).toBe(2);
    expect(mostInFlight).toBe(1);
    expect(Object.keys(reload.config()?.providers ?? {})).toEqual(['third']);
    expect(logged.filter((e) => e.event === 'proxy_config')).toEqual([
      { event: 'proxy_config', result: 'ok', providers: 1 },
      { event: 'proxy_config', result: 'ok', providers: 1 },
    ]);
  });

  test('a file whose proxy section is not valid keeps the section in force', async () => {
    await writeFile(path, proxyFile('kept'));
    const reload = createProxyReload({ configPath: path, mode: 'default', log: () => {} });
    await reload.reload();
    await writeFile(path, 'proxy:\n  providers: [not, a, map]\n');
    await reload.reload();
    expect(Object.keys(reload.config()?.providers ?? {})).toEqual(['kept']);
  });

  test('a provider bound to a tunnel is reported at each reload: the proxy alone runs none', async () => {
    await writeFile(path, 'proxy:\n  providers:\n    db:\n      tunnel: pg\n      path: /v1\n');
    const logged: Record<string, unknown>[] = [];
    const reload = createProxyReload({ configPath: path, mode: 'default', log: (e) => logged.push(e) });
    await reload.reload();
    expect(logged.find((e) => e.event === 'proxy_tunnel_unavailable')).toMatchObject({ provider: 'db', tunnel: 'pg' });
  });
});
