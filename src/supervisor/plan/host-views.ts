// What `ssh -G` says about each tunnel's destination, read in rounds (a reload, SIGHUP,
// an explicit start, a change to the ssh config) and kept cheap at 1000 tunnels: one
// ssh -G per distinct destination and ssh_options in a round (the ssh binary and -F
// file are the supervisor's, the same for all), a few at a time, and a newer round's
// answer never overwritten by an older round that finished later.
// A round also reads the jump hosts of the ProxyJump chains it found (and theirs), one
// ssh -G per hop name, for the known_hosts files the user's config gives each hop
// (daemon-config.ts writes them where the hop's ssh reads them).
// A reload may reuse the answer already held for a destination (same host and
// ssh_options) instead of waiting for ssh -G (SPEC §14: a tunnel added to a known host
// starts at once): only while the ssh config has not changed since it was read, as the
// watcher says (invalidate) and the files behind it confirm (sources-identity.ts).
import { dirname } from 'node:path';
import type { TunnelSpec } from '../../tunnel/spec.js';
import type { ReadSshConfig, SshView } from '../../ssh-config/read.js';
import { FALLBACK_HOST_INFO, type HostInfo } from '../../ssh-config/settings.js';
import type { SshConfigWatcher } from '../../ssh-config/watch.js';
import { quotable, type HopKnownHosts } from '../../ssh-config/daemon-config.js';
import { HOP_FALLBACK, hopHost, jumpChain } from '../../ssh-config/jump-hops.js';
import { sourcesIdentity } from '../../ssh-config/sources-identity.js';

/** ssh -G processes at once: enough to overlap their start, few enough not to crowd out logins. */
export const SSH_G_CONCURRENCY = 4;

/** Distinct jump host names read in one round (hops of hops included): a bound against a runaway config. */
export const MAX_JUMP_HOSTS = 64;

/** One round's answers. */
export interface Resolution {
  /** Rounds are numbered in the order they began. */
  readonly round: number;
  /** What ssh reaches for this spec (ssh's defaults when ssh -G failed). */
  info(spec: TunnelSpec): HostInfo;
  /** The specs answered from an earlier read (resolve with reuse), not by ssh -G now. */
  readonly reused: readonly TunnelSpec[];
}

/** A destination's latest answer, and what it was read under. */
interface Answer {
  round: number;
  view: SshView | null;
  /** The watcher's count of ssh config changes when the read began. */
  generation: number;
  /** sourcesIdentity of the files behind it, just after the read. */
  identity: string;
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
  private readonly views = new Map<string, Answer>();
  /** Bumped at every change the ssh config watcher reports: answers read before are not reused. */
  private generation = 0;
  /** The round each tunnel's plan was built from. */
  private readonly planRounds = new Map<string, number>();
  /** The latest answer per jump host name. */
  private readonly hopViews = new Map<string, { round: number; view: SshView | null }>();

  constructor(
    private readonly read: ReadSshConfig,
    private readonly watcher: SshConfigWatcher,
    /** The user's config files, watched even before ssh reads them (they may not exist yet). */
    private readonly userConfigFiles: readonly string[],
    /** The tunnels configured now (whose files are watched). */
    private readonly current: () => readonly TunnelSpec[],
    private readonly log: (entry: Record<string, unknown>) => void,
    private readonly concurrency = SSH_G_CONCURRENCY,
    /** Told the jump hosts of the tunnels configured now and their files, at the end of every round. */
    private readonly onHops: (hops: HopKnownHosts[]) => void = () => {},
  ) {}

  /**
   * Reads ssh -G once per distinct destination among `specs` and once per jump host
   * they go through, then watches the files behind every configured tunnel's answer
   * and hands on its jump hosts' known_hosts files (onHops).
   */
  async resolve(specs: readonly TunnelSpec[], opts: { reuse?: boolean } = {}): Promise<Resolution> {
    const round = ++this.rounds;
    const distinct = [...new Map(specs.map((spec) => [keyOf(spec), spec]))];
    const answers = new Map<string, SshView | null>();
    if (opts.reuse === true) {
      await Promise.all(
        distinct.map(async ([key]) => {
          const view = await this.reusable(key);
          if (view !== null) answers.set(key, view);
        }),
      );
    }
    const reused = new Set(answers.keys());
    const generation = this.generation;
    const read = new Map<string, Answer>();
    await eachBounded(
      distinct.filter(([key]) => !reused.has(key)),
      this.concurrency,
      async ([key, spec]) => {
        const r = await this.read({ host: spec.remote_host, options: spec.ssh_options }).catch((e: unknown) => ({ ok: false as const, error: String(e) }));
        if (!r.ok) this.log({ event: 'ssh_config_unreadable', remote_host: spec.remote_host, error: r.error });
        const view = r.ok ? r.value : null;
        answers.set(key, view);
        read.set(key, { round, view, generation, identity: '' });
      },
    );
    await Promise.all([...read.values()].map(async (a) => (a.identity = a.view === null ? '' : await sourcesIdentity(this.filesOf(a.view)))));
    for (const [key, answer] of read) {
      if ((this.views.get(key)?.round ?? 0) < round) this.views.set(key, answer);
    }
    await this.readHops(round, [...read.values()].map((a) => a.view?.info.proxyJump ?? null));
    this.settle(specs);
    return {
      round,
      info: (spec) => answers.get(keyOf(spec))?.info ?? FALLBACK_HOST_INFO,
      reused: specs.filter((spec) => reused.has(keyOf(spec))),
    };
  }

  /** The ssh config changed: every answer held so far must be read again before reuse. */
  invalidate(): void {
    this.generation++;
  }

  /**
   * The answer held for a destination key if it may stand for a fresh ssh -G: read
   * successfully, with no change reported since, and its files as they were then.
   */
  private async reusable(key: string): Promise<SshView | null> {
    const held = this.views.get(key);
    if (held === undefined || held.view === null || held.generation !== this.generation) return null;
    const same = (await sourcesIdentity(this.filesOf(held.view))) === held.identity;
    return same && held.generation === this.generation ? held.view : null;
  }

  /** The files an answer depends on: the user's config files (even missing) and those ssh read. */
  private filesOf(view: SshView): string[] {
    return [...this.userConfigFiles, ...view.sources.files];
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

  /**
   * Reads ssh -G for every hop of `chains`, then for the hops of those hops, a level
   * at a time; a name is read once a round, and at most MAX_JUMP_HOSTS names.
   */
  private async readHops(round: number, chains: readonly (string | null)[]): Promise<void> {
    const seen = new Set<string>();
    const refused = new Set<string>();
    const refuse = (hop: string, reason: string) => {
      if (!refused.has(hop)) this.log({ event: 'jump_host_known_hosts_not_read', jump_host: hop, reason, reads: HOP_FALLBACK });
      refused.add(hop);
    };
    const names = (from: readonly (string | null)[]): string[] => {
      const level: string[] = [];
      for (const hop of from.flatMap(jumpChain)) {
        const host = hopHost(hop);
        if (!host.ok) refuse(hop, host.error);
        else if (seen.has(host.value)) continue;
        else if (seen.size >= MAX_JUMP_HOSTS) refuse(hop, `more than ${MAX_JUMP_HOSTS} jump hosts`);
        else {
          seen.add(host.value);
          level.push(host.value);
        }
      }
      return level;
    };
    for (let level = names(chains); level.length > 0; ) {
      const next: (string | null)[] = [];
      await eachBounded(level, this.concurrency, async (host) => {
        const r = await this.read({ host, options: {} }).catch((e: unknown) => ({ ok: false as const, error: String(e) }));
        if (!r.ok) refuse(host, `ssh -G failed: ${r.error}`);
        const view = r.ok ? r.value : null;
        if ((this.hopViews.get(host)?.round ?? 0) < round) this.hopViews.set(host, { round, view });
        next.push(view?.info.proxyJump ?? null);
      });
      level = names(next);
    }
  }

  /** The jump hosts reachable from the tunnels' answers, through hops of hops; forgets the rest. */
  private reachableHops(): Map<string, SshView | null> {
    const out = new Map<string, SshView | null>();
    const visit = (chain: string | null) => {
      for (const hop of jumpChain(chain)) {
        const host = hopHost(hop);
        const answer = host.ok && !out.has(host.value) ? this.hopViews.get(host.value) : undefined;
        if (!host.ok || answer === undefined) continue;
        out.set(host.value, answer.view);
        visit(answer.view?.info.proxyJump ?? null);
      }
    };
    for (const { view } of this.views.values()) visit(view?.info.proxyJump ?? null);
    for (const name of [...this.hopViews.keys()]) if (!out.has(name)) this.hopViews.delete(name);
    return out;
  }

  /**
   * Keeps the answers for the tunnels configured now and those just read (forgets the
   * rest), watches the files behind them, and hands on their jump hosts' files.
   */
  private settle(extra: readonly TunnelSpec[]): void {
    const specs = [...this.current(), ...extra];
    const keys = new Set(specs.map(keyOf));
    const hashes = new Set(specs.map((s) => s.hash));
    for (const key of [...this.views.keys()]) if (!keys.has(key)) this.views.delete(key);
    for (const hash of [...this.planRounds.keys()]) if (!hashes.has(hash)) this.planRounds.delete(hash);
    const hops = this.reachableHops();
    const files = new Set<string>(this.userConfigFiles);
    const folders = new Set<string>();
    const own = new Set(this.userConfigFiles);
    for (const view of [...[...this.views.values()].map((v) => v.view), ...hops.values()]) {
      // A file ssh read besides the config itself came from an Include, whose glob may
      // match a file added to its folder later; one that matched nothing yet likewise.
      for (const f of view?.sources.files ?? []) {
        files.add(f);
        if (!own.has(f)) folders.add(dirname(f));
      }
      for (const p of view?.sources.emptyIncludes ?? []) folders.add(dirname(p));
    }
    this.watcher.watch([...files], [...folders]);
    const blocks: HopKnownHosts[] = [];
    for (const [host, view] of [...hops].sort(([a], [b]) => a.localeCompare(b))) {
      if (view === null) continue;
      const odd = view.info.knownHostsFiles.find((f) => !quotable(f));
      if (odd === undefined) blocks.push({ host, files: view.info.knownHostsFiles });
      else this.log({ event: 'jump_host_known_hosts_not_read', jump_host: host, reason: `its known_hosts file ${JSON.stringify(odd)} holds a quote`, reads: HOP_FALLBACK });
    }
    this.onHops(blocks);
  }
}
