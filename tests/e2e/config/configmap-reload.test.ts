// A Kubernetes ConfigMap update, made on disk exactly as the kubelet makes it, against
// the built daemon and a real sshd: a new timestamped folder, a `..data` symlink
// renamed over the old one, `config.yaml -> ..data/config.yaml` never touched, the old
// folder removed. Each update must be applied like any edit, repeatedly and in quick
// succession, with unchanged tunnels left alone (same ssh pid). The time from the
// rename to the daemon's reload is printed (BENCHMARKS.md), never asserted.
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoServer, port, roundTrip, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let echo: { close(): Promise<void> };
let echoPort: number;
let d: Daemon;
const ports: Record<string, number> = {};
const latencies: number[] = [];

/** The kubelet's AtomicWriter, step for step (pkg/volume/util/atomic_writer.go). */
class ConfigMapVolume {
  private current: string | null = null;
  private n = 0;
  constructor(readonly dir: string) {}

  /** Writes a new payload; returns the time of the rename that makes it visible. */
  update(text: string): number {
    const now = new Date();
    const stamp = now.toISOString().replace(/[-T:]/g, '_').replace(/\..*$/, '');
    const folder = `..${stamp}.${String(100_000_000 + this.n++)}`;
    mkdirSync(join(this.dir, folder), { mode: 0o755 });
    writeFileSync(join(this.dir, folder, 'config.yaml'), text, { mode: 0o644 });
    symlinkSync(folder, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    const at = Date.now();
    // The user-visible name is made once and never changes afterwards.
    if (this.current === null) symlinkSync('..data/config.yaml', join(this.dir, 'config.yaml'));
    else rmSync(join(this.dir, this.current), { recursive: true });
    this.current = folder;
    return at;
  }
}

const tunnel = (name: string) =>
  `  - name: ${name}\n    remote_host: testhost\n    remote_port: ${echoPort}\n    local_port: ${ports[name]}\n    direction: remote_to_local\n`;
const config = (...names: string[]) => `tunnels:\n${names.map(tunnel).join('')}`;

let volume: ConfigMapVolume;
let reloadsSeen = 0;

/** Waits (generously) for the daemon's next reload event after `at`; returns its delay, in ms. */
async function nextReload(at: number): Promise<number> {
  const event = await d.waitFor('the reload of the ConfigMap update', async () => {
    const reloads = d.stderr().split('\n').filter((l) => l.includes('"event":"reload"'));
    if (reloads.length <= reloadsSeen) return undefined;
    reloadsSeen = reloads.length;
    return JSON.parse(reloads.at(-1)!) as { time: string; ok: boolean };
  }, 30_000);
  expect(event.ok).toBe(true);
  const ms = Date.parse(event.time) - at;
  latencies.push(ms);
  return ms;
}

/**
 * Each tunnel's ssh and the moment it entered its state. Tunnels to one host share an ssh
 * by default, so a changed tunnel keeps the pid; it is a new run by its `since`.
 */
async function runs(): Promise<Record<string, { pid: number | null; since: string }>> {
  const all = await d.json<{ name: string; pid: number | null; since: string }[]>('/status');
  return Object.fromEntries(all.map((t) => [t.name, { pid: t.pid, since: t.since }]));
}

async function waitNames(names: string[]): Promise<void> {
  await d.waitFor(`exactly ${names.join(', ')} RUNNING`, async () => {
    const all = await d.json<{ name: string; status: string }[]>('/status');
    return all.length === names.length && names.every((n) => all.some((t) => t.name === n && t.status === 'RUNNING'));
  }, 30_000);
}

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
  for (const name of ['keep', 'moved', 'added', 'burst1', 'burst2', 'last']) ports[name] = await port();
  const dir = mkdtempSync(join(tmpdir(), 'tm-configmap-'));
  volume = new ConfigMapVolume(join(dir, 'config'));
  mkdirSync(volume.dir);
  const first = config('keep', 'moved');
  volume.update(first);
  // startDaemon writes the same text through the link; the layout stays the kubelet's.
  d = await startDaemon({ dir, config: first, sshConfigPath: server.sshConfigPath });
  reloadsSeen = d.stderr().split('\n').filter((l) => l.includes('"event":"reload"')).length;
  await waitNames(['keep', 'moved']);
});

afterAll(async () => {
  if (latencies.length > 0) console.log(`ConfigMap update → reload, ms: ${latencies.join(', ')}`);
  await d?.cleanup();
  await echo?.close();
  await server?.stop();
});

describe('a ConfigMap mounted as the config file', () => {
  it('an update (..data renamed over) is applied: a tunnel added, one changed, the others untouched', async () => {
    const before = await runs();
    const moved = ports.moved!;
    ports.moved = await port();
    await nextReload(volume.update(config('keep', 'moved', 'added')));
    await waitNames(['keep', 'moved', 'added']);
    const after = await runs();
    expect(after.keep).toEqual(before.keep);
    // `moved`'s pid is its shared connection's (SPEC §14), which keep uses too: its new
    // forward is a new run (since), shows in the data on the new port and none on the old one.
    expect(after.moved!.pid).toBe(after.keep!.pid);
    expect(after.moved!.since).not.toBe(before.moved!.since);
    expect(await roundTrip(ports.moved, 'moved')).toBe('moved');
    expect(await roundTrip(ports.added!, 'added')).toBe('added');
    await expect(roundTrip(moved, 'old port', '127.0.0.1', 500)).rejects.toThrow();
    // The old folder is gone, as the kubelet leaves it: one timestamped folder, ..data, config.yaml.
    expect(readdirSync(volume.dir).filter((n) => /^\.\.\d{4}_/.test(n))).toHaveLength(1);
  });

  it('updates one after another are each applied, and unchanged tunnels keep their ssh', async () => {
    const keep = (await runs()).keep;
    for (const names of [['keep', 'moved'], ['keep', 'moved', 'added'], ['keep', 'added']]) {
      await nextReload(volume.update(config(...names)));
      await waitNames(names);
      expect((await runs()).keep).toEqual(keep);
    }
  });

  it('updates in quick succession end in the last one, with unchanged tunnels untouched', async () => {
    const before = await runs();
    volume.update(config('keep', 'added', 'burst1'));
    volume.update(config('keep', 'added', 'burst1', 'burst2'));
    const last = volume.update(config('keep', 'added', 'burst2', 'last'));
    await nextReload(last);
    await waitNames(['keep', 'added', 'burst2', 'last']);
    const after = await runs();
    expect(after.keep).toEqual(before.keep);
    expect(after.added).toEqual(before.added);
    expect(await roundTrip(ports.last!, 'last')).toBe('last');
  });
});
