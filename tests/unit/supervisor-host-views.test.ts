// The ssh -G rounds: one read per distinct destination and options, a bounded number at
// once, an older round finishing late never replacing a newer answer, and the watched
// files those of every configured tunnel (not only of the last one read).
import { describe, expect, it } from 'vitest';
import { HostViews } from '../../src/supervisor/host-views.js';
import type { SshGRequest, SshView } from '../../src/ssh-config/read.js';
import { hostInfo, parseSshG } from '../../src/ssh-config/settings.js';
import type { TunnelSpec } from '../../src/tunnel/spec.js';
import { ok, type Result } from '../../src/result.js';

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
  return { watched, watcher: { watch: (files: readonly string[]) => void watched.push([...files].sort()), close: async () => {} } };
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
    const { watcher, watched } = fakeWatcher();
    const configured = [spec('a', 'alpha'), spec('b', 'beta')];
    const views = new HostViews(g.read, watcher, ['/home/u/.ssh/config'], () => configured, () => {});
    const all = views.resolve(configured);
    await g.releaseAll();
    await all;
    expect(watched.at(-1)).toEqual(['/cfg/alpha', '/cfg/beta', '/home/u/.ssh/config']);
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
