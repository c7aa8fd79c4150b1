// Which file the panel edits (config-file.ts): its own --config/TUNNEL_CONFIG, else the
// file the daemon reports it runs, else (daemon not reachable) the default, told.
import { describe, expect, it } from 'vitest';
import { err, ok } from '../../../src/kernel/result.js';
import { panelConfigFile } from '../../../src/panel/config-file.js';
import type { DaemonClient, DaemonFailure } from '../../../src/panel/daemon-client.js';

const refused: DaemonFailure = { reason: 'connection', code: 'daemon_refused', message: 'nothing listens at http://127.0.0.1:8080', params: {} };

/** A daemon client whose /health/details answers in turn from `answers` (the last one repeats). */
function daemon(answers: Array<unknown | DaemonFailure>) {
  const calls: string[] = [];
  let i = 0;
  const client: DaemonClient = {
    where: 'http://127.0.0.1:8080',
    async get<T>(path: string) {
      calls.push(path);
      const a = answers[Math.min(i++, answers.length - 1)];
      return (a as DaemonFailure)?.reason !== undefined ? err(a as DaemonFailure) : ok(a as T);
    },
    post: async () => err(refused),
    events: async () => err(refused),
  };
  return { client, calls };
}

const run = (given: string | null, answers: Array<unknown | DaemonFailure>, attempts = 3) => {
  const d = daemon(answers);
  const logged: Record<string, unknown>[] = [];
  const result = panelConfigFile({ given, fallback: '/home/u/panel-dir/config/config.yaml', daemon: d.client, log: (e) => logged.push(e), attempts, intervalMs: 1 });
  return result.then((r) => ({ ...r, logged, calls: d.calls }));
};

describe('the file the panel edits', () => {
  it('without --config or TUNNEL_CONFIG: the file the daemon runs, as it says', async () => {
    const r = await run(null, [{ ok: true, config_path: '/srv/tunnels/config/config.yaml' }]);
    expect(r).toMatchObject({ path: '/srv/tunnels/config/config.yaml', source: 'daemon', logged: [] });
    expect(r.calls).toEqual(['/health/details']);
  });

  it('a daemon still starting beside the panel is asked again', async () => {
    const r = await run(null, [refused, refused, { ok: true, loading: true, config_path: '/srv/c.yaml' }]);
    expect(r).toMatchObject({ path: '/srv/c.yaml', source: 'daemon' });
    expect(r.calls).toHaveLength(3);
  });

  it('a daemon that cannot be asked: the default, with a warning that says why and how to name the file', async () => {
    const r = await run(null, [refused]);
    expect(r).toMatchObject({ path: '/home/u/panel-dir/config/config.yaml', source: 'default' });
    expect(r.calls).toHaveLength(3);
    expect(r.logged).toEqual([
      {
        event: 'panel_config_default',
        config: '/home/u/panel-dir/config/config.yaml',
        warning: "could not ask the daemon at http://127.0.0.1:8080 which config file it runs (nothing listens at http://127.0.0.1:8080); editing /home/u/panel-dir/config/config.yaml. Set --config or TUNNEL_CONFIG to the daemon's file",
      },
    ]);
  });

  it('a wrong token, or a daemon that names no file (older), is not taken for an answer', async () => {
    const denied: DaemonFailure = { reason: 'daemon', status: 401, code: 'unauthorized', message: 'the daemon refused the token' };
    expect((await run(null, [denied])).logged[0]?.warning).toContain('(the daemon refused the token)');
    const old = await run(null, [{ ok: true, loading: false, config: null }]);
    expect(old.source).toBe('default');
    expect(old.logged[0]?.warning).toContain('names no config file');
    // A relative path is not the daemon's absolute path: not trusted either.
    expect((await run(null, [{ ok: true, config_path: 'config/config.yaml' }])).source).toBe('default');
  });

  it('--config or TUNNEL_CONFIG given: that file; a daemon that runs another is named in a warning', async () => {
    const same = await run('/srv/c.yaml', [{ ok: true, config_path: '/srv/c.yaml' }]);
    expect(same).toMatchObject({ path: '/srv/c.yaml', source: 'setting', logged: [] });
    const other = await run('/srv/mine.yaml', [{ ok: true, config_path: '/srv/c.yaml' }]);
    expect(other).toMatchObject({ path: '/srv/mine.yaml', source: 'setting' });
    expect(other.logged[0]).toMatchObject({ event: 'panel_config_differs', config: '/srv/mine.yaml', daemon_config: '/srv/c.yaml' });
    // Not reachable: its own file, asked once, without a wait.
    const alone = await run('/srv/mine.yaml', [refused]);
    expect(alone).toMatchObject({ path: '/srv/mine.yaml', source: 'setting', logged: [] });
    expect(alone.calls).toHaveLength(1);
  });
});
