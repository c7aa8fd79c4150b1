// The built daemon (dist/main.js) started as a user would start it, against a private
// sshd. Shared by the end-to-end suites.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, renameSync, rmSync } from 'node:fs';
import { sshPidsMentioning } from '../integration/supervisor-fixture.js';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain JS helper shared with the scripts
import { freePort, startSshd } from '../../scripts/lib/sshd.mjs';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const MAIN = join(REPO, 'dist/main.js');
export const CLI = join(REPO, 'dist/cli/main.js');

export interface Sshd {
  port: number;
  sshConfigPath: string;
  alias: string;
  dir: string;
  /** The login user, the key the server accepts, and the client's known_hosts for it. */
  user: string;
  clientKey: string;
  knownHosts: string;
  /** The server's host key (its `.pub` beside it), and a key the server does not accept. */
  hostKey: string;
  otherKey: string;
  log: string;
  pid: number;
  sessionPids(): number[];
  allPids(): number[];
  kill(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export const sshd = (opts: Record<string, unknown> = {}): Promise<Sshd> => startSshd(opts);
export const port = (): Promise<number> => freePort();

export interface Daemon {
  dir: string;
  configPath: string;
  socketPath: string;
  stateDir: string;
  apiPort: number;
  child: ChildProcess;
  stderr(): string;
  api(path: string, init?: RequestInit): Promise<Response>;
  json<T = any>(path: string, init?: RequestInit): Promise<T>;
  /** Writes the config the way editors do: a temp file renamed over the old one. */
  writeConfig(text: string): void;
  waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Polls /status until the tunnel named `name` is in `state`. */
  waitState(name: string, state: string, timeoutMs?: number): Promise<any>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  cleanup(): Promise<void>;
}

export interface DaemonOptions {
  config: string;
  sshConfigPath: string;
  dir?: string;
  env?: Record<string, string>;
  args?: string[];
  apiPort?: number;
}

export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'tm-e2e-'));
  const configPath = join(dir, 'config', 'config.yaml');
  const socketPath = join(dir, 'run', 'api.sock');
  const stateDir = join(dir, 'state');
  mkdirSync(dirname(configPath), { recursive: true });
  writeFileSync(configPath, opts.config);
  const apiPort = opts.apiPort ?? (await freePort());
  let err = '';
  const child = spawn(
    process.execPath,
    [
      MAIN,
      '--config', configPath,
      '--listen', `127.0.0.1:${apiPort}`,
      '--socket', socketPath,
      '--state-dir', stateDir,
      '--ssh-config', opts.sshConfigPath,
      ...(opts.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } },
  );
  child.stderr!.on('data', (d) => (err += String(d)));
  child.stdout!.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

  const api = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${apiPort}${path}`, init);
  const d: Daemon = {
    dir,
    configPath,
    socketPath,
    stateDir,
    apiPort,
    child,
    stderr: () => err,
    api,
    async json<T>(path: string, init?: RequestInit) {
      const res = await api(path, init);
      return (await res.json()) as T;
    },
    writeConfig(text) {
      const tmp = join(dirname(configPath), `.config.yaml.${process.pid}.tmp`);
      writeFileSync(tmp, text);
      renameSync(tmp, configPath);
    },
    async waitFor(what, probe, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last: unknown;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`the daemon exited (${child.exitCode}) while waiting for ${what}:\n${err}`);
        try {
          const v = await probe();
          if (v !== undefined && v !== false) return v as any;
        } catch (e) {
          last = e;
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}\n--- daemon log ---\n${err.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    waitState(name, state, timeoutMs) {
      return d.waitFor(`${name} ${state}`, async () => {
        const all = await d.json<any[]>('/status');
        const t = all.find((x) => x.name === name);
        return t && t.status === state ? t : undefined;
      }, timeoutMs);
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
    async cleanup() {
      await d.stop('SIGKILL').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // The API answers before the first reload is done; the tests start from the loaded file.
  await d.waitFor('the API and the first reload', async () => err.includes('"event":"started"') && (await api('/health')).ok);
  return d;
}

/** A TCP echo server on 127.0.0.1 (the "service" behind a tunnel). */
export async function echoServer(p: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => srv.listen(p, '127.0.0.1', r));
  return {
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}

/** Sends `text` to host:port and resolves with what comes back (the echo). */
export function roundTrip(p: number, text = 'ping', host = '127.0.0.1', timeoutMs = 3000): Promise<string> {
  return new Promise((resolveRt, reject) => {
    const s = net.connect({ port: p, host });
    let got = '';
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no echo from ${host}:${p} within ${timeoutMs} ms (got ${JSON.stringify(got)})`));
    }, timeoutMs);
    s.on('connect', () => s.write(text));
    s.on('data', (d) => {
      got += String(d);
      if (got.length >= text.length) {
        clearTimeout(timer);
        s.destroy();
        resolveRt(got);
      }
    });
    s.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.on('close', () => {
      clearTimeout(timer);
      if (got.length < text.length) reject(new Error(`connection to ${host}:${p} closed (got ${JSON.stringify(got)})`));
    });
  });
}

/** ssh processes whose command line mentions `marker` (a path unique to one test). */
export const sshChildren = sshPidsMentioning;
