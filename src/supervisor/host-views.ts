// What `ssh -G` says about each tunnel's destination, read in rounds (a reload, SIGHUP,
// an explicit start, a change to the ssh config) and kept cheap at 1000 tunnels: one
// ssh -G per distinct destination and ssh_options in a round (the ssh binary and -F
// file are the supervisor's, the same for all), a few at a time, and a newer round's
// answer never overwritten by an older round that finished later.
import { dirname } from 'node:path';
import type { TunnelSpec } from '../tunnel/spec.js';
import type { ReadSshConfig, SshView } from '../ssh-config/read.js';
import { FALLBACK_HOST_INFO, type HostInfo } from '../ssh-config/settings.js';
import type { SshConfigWatcher } from '../ssh-config/watch.js';

/** ssh -G processes at once: enough to overlap their start, few enough not to crowd out logins. */
export const SSH_G_CONCURRENCY = 4;

/** One round's answers. */
export interface Resolution {
  /** Rounds are numbered in the order they began. */
  readonly round: number;
  /** What ssh reaches for this spec (ssh's defaults when ssh -G failed). */
  info(spec: TunnelSpec): HostInfo;
}

const keyOf = (spec: TunnelSpec): string => JSON.stringify([spec.remote_host, spec.ssh_options]);

/** Runs `fn` over `items`, at most `limit` at a time. */
async function eachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export class HostViews {
  private rounds = 0;
  /** The latest answer per destination key, with its round: what the watcher watches. */
  private readonly views = new Map<string, { round: number; view: SshView | null }>();
  /** The round each tunnel's plan was built from. */
  private readonly planRounds = new Map<string, number>();

  constructor(
    private readonly read: ReadSshConfig,
    private readonly watcher: SshConfigWatcher,
    /** The user's config files, watched even before ssh reads them (they may not exist yet). */
    private readonly userConfigFiles: readonly string[],
    /** The tunnels configured now (whose files are watched). */
    private readonly current: () => readonly TunnelSpec[],
    private readonly log: (entry: Record<string, unknown>) => void,
    private readonly concurrency = SSH_G_CONCURRENCY,
  ) {}

  /** Reads ssh -G once per distinct destination among `specs`, then watches the files behind every configured tunnel's answer. */
  async resolve(specs: readonly TunnelSpec[]): Promise<Resolution> {
    const round = ++this.rounds;
    const distinct = [...new Map(specs.map((spec) => [keyOf(spec), spec]))];
    const answers = new Map<string, SshView | null>();
    await eachBounded(distinct, this.concurrency, async ([key, spec]) => {
      const r = await this.read({ host: spec.remote_host, options: spec.ssh_options }).catch((e: unknown) => ({ ok: false as const, error: String(e) }));
      if (!r.ok) this.log({ event: 'ssh_config_unreadable', remote_host: spec.remote_host, error: r.error });
      answers.set(key, r.ok ? r.value : null);
    });
    for (const [key, view] of answers) {
      if ((this.views.get(key)?.round ?? 0) < round) this.views.set(key, { round, view });
    }
    this.watchFiles(specs);
    return { round, info: (spec) => answers.get(keyOf(spec))?.info ?? FALLBACK_HOST_INFO };
  }

  /**
   * True when `round` is newer than the one the tunnel's plan came from, and records it:
   * the caller then builds the plan from that round. An older round finishing late is ignored.
   */
  claim(hash: string, round: number): boolean {
    if ((this.planRounds.get(hash) ?? 0) > round) return false;
    this.planRounds.set(hash, round);
    return true;
  }

  /** Watches the files of the answers for the tunnels configured now and those just read; forgets the rest. */
  private watchFiles(extra: readonly TunnelSpec[]): void {
    const specs = [...this.current(), ...extra];
    const keys = new Set(specs.map(keyOf));
    const hashes = new Set(specs.map((s) => s.hash));
    for (const key of [...this.views.keys()]) if (!keys.has(key)) this.views.delete(key);
    for (const hash of [...this.planRounds.keys()]) if (!hashes.has(hash)) this.planRounds.delete(hash);
    const files = new Set<string>(this.userConfigFiles);
    const folders = new Set<string>();
    for (const { view } of this.views.values()) {
      for (const f of view?.sources.files ?? []) files.add(f);
      for (const p of view?.sources.emptyIncludes ?? []) folders.add(dirname(p));
    }
    this.watcher.watch([...files], [...folders]);
  }
}
