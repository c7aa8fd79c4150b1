// Helpers for the supervisor's integration tests: tunnel specs as the config loader
// would build them, a TCP echo server, the servers a file's tests share, and polling.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
// @ts-expect-error plain JS helper shared with the scripts
import { freePort, portIsFree, startSshd } from '../../scripts/lib/sshd.mjs';
import { parseEndpoint } from '../../src/tunnel/endpoint.js';
import { tunnelHash } from '../../src/tunnel/hash.js';
import { NO_REMOTE_PORT, type Direction, type TunnelSpec } from '../../src/tunnel/spec.js';
import type { StatusRecord, TunnelState } from '../../src/tunnel/status.js';
import type { SupervisorApi } from '../../src/supervisor/types.js';

export interface Sshd {
  port: number;
  sshConfigPath: string;
  alias: string;
  dir: string;
  /** The client key the server accepts (its public half is in `dir`/authorized_keys). */
  clientKey: string;
  log: string;
  pid: number;
  sessionPids(): number[];
  allPids(): number[];
  kill(): Promise<void>;
  start(): Promise<void>;
}

export const sshd = (opts: Record<string, unknown> = {}): Promise<Sshd> => startSshd(opts);
export const port = (): Promise<number> => freePort();
export const isFree = (p: number, host = '127.0.0.1'): Promise<boolean> => portIsFree(p, host);

export function tempDir(prefix = 'tm-sup-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface SpecInput {
  name?: string;
  remote_host: string;
  remote_port: string | number;
  local_port: string | number;
  direction: Direction;
  interactive?: boolean;
  ssh_options?: Record<string, string>;
  /** false: an ssh of its own (SPEC §14). */
  shared?: false;
}

/** A TunnelSpec as the config loader builds it (hash over the values as written). */
export function spec(input: SpecInput): TunnelSpec {
  const name = input.name ?? 'unnamed';
  const remote = String(input.remote_port);
  const local = String(input.local_port);
  const interactive = input.interactive ?? false;
  // A SOCKS tunnel has no remote_port (SPEC §14).
  const rp = input.direction === 'socks' ? { ok: true as const, value: NO_REMOTE_PORT } : parseEndpoint(remote);
  const lp = parseEndpoint(local);
  if (!rp.ok || !lp.ok) throw new Error(`bad endpoint in test spec: ${remote} / ${local}`);
  const hash = tunnelHash({ name, remote_host: input.remote_host, remote_port: remote, local_port: local, direction: input.direction, interactive: String(interactive) });
  return {
    hash,
    name,
    remote_host: input.remote_host,
    remote_port: rp.value,
    local_port: lp.value,
    direction: input.direction,
    interactive,
    ssh_options: input.ssh_options ?? {},
    ...(input.shared === false ? { shared: false as const } : {}),
    written: { ...input },
    line: 1,
  };
}

/** What a file's tests share: one real sshd, one echo server, and the supervisors its tests start. */
export interface SharedServers {
  readonly server: Sshd;
  readonly echo: { port: number; close(): Promise<void> };
  /** Every supervisor a test starts goes here: each is shut down after its test. */
  readonly supervisors: SupervisorApi[];
}

/**
 * Starts the sshd and the echo server before the file's tests and stops them after,
 * shutting down after each test the supervisors it pushed. Call it at the top of the
 * file; `server` and `echo` are there from its first test on.
 */
export function sharedServers(): SharedServers {
  let server: Sshd | undefined;
  let echo: SharedServers['echo'] | undefined;
  const supervisors: SupervisorApi[] = [];
  beforeAll(async () => {
    server = await sshd();
    echo = await echoServer();
  });
  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.shutdown()));
  });
  afterAll(async () => {
    await echo?.close();
    await server?.kill();
  });
  const started = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`the shared ${what} is started before the file's first test`);
    return value;
  };
  return {
    get server() {
      return started('sshd', server);
    },
    get echo() {
      return started('echo server', echo);
    },
    supervisors,
  };
}

/** A TCP server that echoes what it receives, on host:port (port 0: any). */
export async function echoServer(p = 0, host = '127.0.0.1'): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(p, host, () => resolve());
  });
  const addr = server.address() as net.AddressInfo;
  return {
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends a line through host:port and resolves with what came back, or null on failure. */
export function roundTrip(p: number, host = '127.0.0.1', payload = `ping-${Math.random()}`): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port: p, host });
    let got = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 2_000);
    s.on('connect', () => s.write(payload));
    s.on('data', (d) => {
      got += String(d);
      if (got === payload) done(true);
    });
    s.on('error', () => done(false));
    s.on('close', () => done(got === payload));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value (not undefined/false) or the time is up. */
export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export function waitState(sup: SupervisorApi, hash: string, state: TunnelState, timeoutMs = 15_000): Promise<StatusRecord> {
  return waitFor(`${hash.slice(0, 8)} to be ${state} (now ${sup.status(hash)?.status}: ${sup.status(hash)?.last_error})`, () => {
    const s = sup.status(hash);
    return s?.status === state ? s : undefined;
  }, timeoutMs);
}

/** True while a process with this pid exists (zombies count as gone: their cmdline is empty). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== '';
  } catch {
    return false;
  }
}

/** Pids of ssh processes whose command line mentions `needle`. */
export function sshPidsMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (/(^|\/)ssh$/.test(argv[0] ?? '') && argv.some((a) => a.includes(needle))) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}
