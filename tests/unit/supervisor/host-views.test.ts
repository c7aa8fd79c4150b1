// The ssh -G rounds: one read per distinct destination and options, a bounded number at
// once, an older round finishing late never replacing a newer answer, and the watched
// files those of every configured tunnel (not only of the last one read).
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostViews, MAX_JUMP_HOSTS } from '../../../src/supervisor/plan/host-views.js';
import type { SshGRequest, SshView } from '../../../src/ssh-config/read.js';
import { hostInfo, parseSshG } from '../../../src/ssh-config/settings.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';
import { ok, type Result } from '../../../src/kernel/result.js';

const spec = (hash: string, remote_host: string, ssh_options: Record<string, string> = {}) =>
  ({ hash, name: hash, remote_host, ssh_options }) as unknown as TunnelSpec;

function view(port: number, file: string): SshView {
  const settings = parseSshG(`hostname 127.0.0.1\nport ${port}\n`);
  return { settings, info: hostInfo(settings), sources: { files: [file], emptyIncludes: [] } };
}

/** An ssh -G that answers when told, counting calls and how many run at once. */
function gatedReader() {
  const calls: SshGRequest[] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const read = async (req: SshGRequest): Promise<Result<SshView, string>> => {
    calls.push(req);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise<void>((r) => waiting.push(r));
    inFlight--;
    return ok(view(Number(req.options.Port ?? 22), `/cfg/${req.host}`));
  };
  const releaseAll = async () => {
    while (waiting.length > 0 || inFlight > 0) {
      waiting.splice(0).forEach((r) => r());
      await new Promise((r) => setImmediate(r));
    }
  };
  return { read, calls, releaseAll, maxInFlight: () => maxInFlight, waiting };
}

function fakeWatcher() {
  const watched: string[][] = [];
  const folders: string[][] = [];
  const watch = (files: readonly string[], dirs: readonly string[]) => {
    watched.push([...files].sort());
    folders.push([...dirs].sort());
  };
  return { watched, folders, watcher: { watch, close: async () => {} } };
}

describe('host views (ssh -G rounds)', () => {
  it('reads once per distinct destination and options, at most the bound at once', async () => {
    const g = gatedReader();
    const { watcher } = fakeWatcher();
    const specs = [
      ...Array.from({ length: 50 }, (_, i) => spec(`a${i}`, `host${i % 10}`)),
      spec('p', 'host0', { Port: '2222' }),
    ];
    const views = new HostViews(g.read, watcher, [], () => [], () => {}, 3);
    const done = views.resolve(specs);
    await new Promise((r) => setImmediate(r));
    expect(g.waiting.length).toBe(3);
    await g.releaseAll();
    const r = await done;
    expect(g.calls).toHaveLength(11);
    expect(g.maxInFlight()).toBe(3);
    expect(r.info(spec('x', 'host0', { Port: '2222' })).port).toBe('2222');
    expect(r.info(spec('y', 'host3')).port).toBe('22');
  });

  it('a tunnel takes a round only if no newer round already built its plan', async () => {
    const g = gatedReader();
    const { watcher } = fakeWatcher();
    const views = new HostViews(g.read, watcher, [], () => [spec('t', 'h')], () => {});
    const older = views.resolve([spec('t', 'h')]);
    const newer = views.resolve([spec('t', 'h')]);
    await g.releaseAll();
    const [o, n] = await Promise.all([older, newer]);
    expect(views.claim('t', n.round)).toBe(true);
    expect(views.claim('t', o.round)).toBe(false);
    expect(views.claim('t', n.round)).toBe(true);
  });

  it('watches the files behind every configured tunnel, plus the user config, even after reading only one', async () => {
    const g = gatedReader();
    const { watcher, watched, folders } = fakeWatcher();
    const configured = [spec('a', 'alpha'), spec('b', 'beta')];
    const views = new HostViews(g.read, watcher, ['/home/u/.ssh/config'], () => configured, () => {});
    const all = views.resolve(configured);
    await g.releaseAll();
    await all;
    expect(watched.at(-1)).toEqual(['/cfg/alpha', '/cfg/beta', '/home/u/.ssh/config']);
    // The files besides the config came from an Include: a file added to their folder may match its glob.
    expect(folders.at(-1)).toEqual(['/cfg']);
    const one = views.resolve([configured[0]!]);
    await g.releaseAll();
    await one;
    expect(watched.at(-1)).toEqual(['/cfg/alpha', '/cfg/beta', '/home/u/.ssh/config']);
    configured.pop();
    const again = views.resolve([]);
    await again;
    expect(watched.at(-1)).toEqual(['/cfg/alpha', '/home/u/.ssh/config']);
  });
});

describe('host views: jump hosts', () => {
  /** ssh -G answers from a table of host → ssh -G text; unknown hosts fail. */
  function tableReader(table: Record<string, string>) {
    const calls: string[] = [];
    const read = async (req: SshGRequest): Promise<Result<SshView, string>> => {
      calls.push(req.host);
      const text = table[req.host];
      if (text === undefined) return { ok: false, error: `no answer for ${req.host}` };
      const settings = parseSshG(text);
      return ok({ settings, info: hostInfo(settings), sources: { files: [`/cfg/${req.host}`], emptyIncludes: [] } });
    };
    return { read, calls };
  }

  it('reads each hop once, hops of hops too, and hands on their files; a refused or unreadable hop is logged', async () => {
    const { read, calls } = tableReader({
      t1: 'hostname 10.0.0.1\nproxyjump ops@b1:2222,b2\n',
      t2: 'hostname 10.0.0.2\nproxyjump b2,bad*,[fe80::1]:22\n',
      b1: 'hostname 10.0.1.1\nuserknownhostsfile /pins/b1 ~/.ssh/known_hosts\nproxyjump b0\n',
      b2: 'hostname 10.0.1.2\nuserknownhostsfile ~/.ssh/known_hosts ~/.ssh/known_hosts2\n',
      b0: 'hostname 10.0.1.0\nuserknownhostsfile /pins/b0\nproxyjump b1\n',
    });
    const { watcher, watched } = fakeWatcher();
    const log: Record<string, unknown>[] = [];
    const published: unknown[] = [];
    const configured = [spec('a', 't1'), spec('b', 't2')];
    const views = new HostViews(read, watcher, [], () => configured, (e) => log.push(e), 2, (hops) => published.push(hops));
    await views.resolve(configured);
    expect(calls.filter((c) => c.startsWith('b') || c.startsWith('fe')).sort()).toEqual(['b0', 'b1', 'b2', 'fe80::1']);
    expect(published.at(-1)).toEqual([
      { host: 'b0', files: ['/pins/b0'] },
      { host: 'b1', files: ['/pins/b1', '~/.ssh/known_hosts'] },
      { host: 'b2', files: ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'] },
    ]);
    expect(log).toContainEqual(expect.objectContaining({ event: 'jump_host_known_hosts_not_read', jump_host: 'bad*', reason: expect.stringMatching(/characters other than/) }));
    expect(log).toContainEqual(expect.objectContaining({ event: 'jump_host_known_hosts_not_read', jump_host: 'fe80::1', reason: 'ssh -G failed: no answer for fe80::1' }));
    expect(watched.at(-1)).toEqual(['/cfg/b0', '/cfg/b1', '/cfg/b2', '/cfg/t1', '/cfg/t2']);

    // The tunnel through b1 goes: b1 and b0 are no longer anyone's hop.
    configured.shift();
    await views.resolve([]);
    expect(published.at(-1)).toEqual([{ host: 'b2', files: ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'] }]);
  });

  it('leaves a hop whose file holds a quote to the defaults, and says so', async () => {
    const { read } = tableReader({ t: 'hostname 10.0.0.1\nproxyjump q\n', q: 'hostname 10.0.1.9\nuserknownhostsfile /pins/"q\n' });
    const log: Record<string, unknown>[] = [];
    const published: unknown[] = [];
    const views = new HostViews(read, fakeWatcher().watcher, [], () => [spec('a', 't')], (e) => log.push(e), 2, (hops) => published.push(hops));
    await views.resolve([spec('a', 't')]);
    expect(published.at(-1)).toEqual([]);
    expect(log).toContainEqual(expect.objectContaining({ jump_host: 'q', reason: expect.stringMatching(/holds a quote/) }));
  });

  it('stops at MAX_JUMP_HOSTS names in a round', async () => {
    const table: Record<string, string> = { t: 'hostname 10.0.0.1\nproxyjump h0\n' };
    for (let i = 0; i < MAX_JUMP_HOSTS + 5; i++) table[`h${i}`] = `hostname 10.1.0.1\nproxyjump h${i + 1}\n`;
    const { read, calls } = tableReader(table);
    const log: Record<string, unknown>[] = [];
    const views = new HostViews(read, fakeWatcher().watcher, [], () => [spec('a', 't')], (e) => log.push(e), 2, () => {});
    await views.resolve([spec('a', 't')]);
    expect(calls.length).toBe(1 + MAX_JUMP_HOSTS);
    expect(log).toContainEqual(expect.objectContaining({ jump_host: `h${MAX_JUMP_HOSTS}`, reason: `more than ${MAX_JUMP_HOSTS} jump hosts` }));
  });
});

describe('host views: an answer reused for a new tunnel to a known destination', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** ssh -G answers naming real files (so their identity can change), counting reads. */
  function fileReader() {
    const dir = mkdtempSync(join(tmpdir(), 'host-views-'));
    dirs.push(dir);
    const included = join(dir, 'included');
    writeFileSync(included, 'Port 2200\n');
    const calls: string[] = [];
    let port = 2200;
    const read = async (req: SshGRequest): Promise<Result<SshView, string>> => {
      calls.push(req.host);
      if (req.host === 'broken') return { ok: false, error: 'Bad configuration option' };
      const settings = parseSshG(`hostname 127.0.0.1\nport ${port}\n`);
      return ok({ settings, info: hostInfo(settings), sources: { files: [included], emptyIncludes: [] } });
    };
    return { read, calls, dir, included, setPort: (p: number) => (port = p), userConfig: join(dir, 'config') };
  }

  async function setup() {
    const f = fileReader();
    const configured: TunnelSpec[] = [];
    const views = new HostViews(f.read, fakeWatcher().watcher, [f.userConfig], () => configured, () => {});
    configured.push(spec('a', 'alpha'));
    await views.resolve(configured);
    return { f, views, configured };
  }

  it('a new tunnel with the same host and options takes the answer held, without ssh -G, and says so', async () => {
    const { f, views } = await setup();
    const next = spec('b', 'alpha');
    const r = await views.resolve([next], { reuse: true });
    expect(f.calls).toEqual(['alpha']);
    expect(r.info(next).port).toBe('2200');
    expect(r.reused).toEqual([next]);
  });

  it('other options, another host, or no reuse asked: ssh -G runs', async () => {
    const { f, views } = await setup();
    await views.resolve([spec('b', 'alpha', { Port: '2300' }), spec('c', 'beta')], { reuse: true });
    const plain = await views.resolve([spec('d', 'alpha')]);
    expect(f.calls.sort()).toEqual(['alpha', 'alpha', 'alpha', 'beta']);
    expect(plain.reused).toEqual([]);
  });

  it('the watcher reporting a change (invalidate) ends every reuse until read again', async () => {
    const { f, views } = await setup();
    f.setPort(2201);
    views.invalidate();
    const r = await views.resolve([spec('b', 'alpha')], { reuse: true });
    expect(r.info(spec('b', 'alpha')).port).toBe('2201');
    expect(r.reused).toEqual([]);
    // Read again after the change: reusable again.
    const again = await views.resolve([spec('c', 'alpha')], { reuse: true });
    expect(again.reused).toHaveLength(1);
    expect(f.calls).toEqual(['alpha', 'alpha']);
  });

  it('a file behind the answer edited, replaced by rename or created, before the watcher says so: read again', async () => {
    const { f, views } = await setup();
    const fresh = async () => (await views.resolve([spec('x', 'alpha')], { reuse: true })).reused.length === 0;
    writeFileSync(f.included, 'Port 2200\nUser someone\n');
    expect(await fresh()).toBe(true);
    writeFileSync(join(f.dir, 'tmp'), 'Port 2201\n');
    renameSync(join(f.dir, 'tmp'), f.included);
    expect(await fresh()).toBe(true);
    // The user's own config file, missing so far, appears.
    writeFileSync(f.userConfig, 'Host alpha\n  Port 2202\n');
    expect(await fresh()).toBe(true);
    expect(await fresh()).toBe(false);
    expect(f.calls).toHaveLength(4);
  });

  it('a failed ssh -G is never reused; answers of tunnels no longer configured are forgotten', async () => {
    const { f, views, configured } = await setup();
    configured.push(spec('k', 'broken'));
    await views.resolve([spec('k', 'broken')]);
    const r = await views.resolve([spec('k2', 'broken')], { reuse: true });
    expect(r.reused).toEqual([]);
    configured.splice(0);
    await views.resolve([]);
    expect((await views.resolve([spec('z', 'alpha')], { reuse: true })).reused).toEqual([]);
    expect(f.calls).toEqual(['alpha', 'broken', 'broken', 'alpha']);
  });
});
