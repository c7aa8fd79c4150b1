// deploy/systemd: the system unit and the user unit pass `systemd-analyze verify`
// with nothing to say, hold the settings SPEC §11 asks for, and their ExecStart and
// ExecReload do what they promise when run as systemd would run them: the daemon
// starts with exactly those flags in the folders systemd makes, and the reload
// command makes it read its config again.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSocketPath, defaultStateDir } from '../../src/settings/default-paths.js';
import { MAIN, REPO, port } from '../e2e/daemon-harness.js';

const SYSTEM = join(REPO, 'deploy/systemd/tunnel-manager.service');
const USER = join(REPO, 'deploy/systemd/user/tunnel-manager.service');
/** Where verify looks first for the bare name the units start (systemd's fixed search path). */
const BIN = '/usr/local/bin/tunnel-manager';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tm-systemd-'));
  chmodSync(tmp, 0o700);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `[Section]` → key → values (a key may repeat), as systemd reads a unit; comments and blank lines skipped. */
function unit(path: string): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(t);
    if (head !== null) {
      section = new Map();
      out.set(head[1]!, section);
      continue;
    }
    const kv = /^([A-Za-z]+)=(.*)$/.exec(t);
    if (kv === null || section === undefined) throw new Error(`${path}: cannot read ${JSON.stringify(line)}`);
    section.set(kv[1]!, [...(section.get(kv[1]!) ?? []), kv[2]!]);
  }
  return out;
}

const get = (u: ReturnType<typeof unit>, section: string, key: string) => u.get(section)?.get(key)?.at(-1);

/**
 * `systemd-analyze verify` (or another of its commands), which also checks that every
 * command exists: run in a private mount namespace where the installed program's path
 * holds a stand-in, so that the unit is checked as shipped and the machine is left as it is.
 */
async function analyze(path: string, user: boolean, command: string[] = ['verify']) {
  const runtime = join(tmp, 'runtime');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const script = `mount -t tmpfs tmpfs "$(dirname "$BIN")" && printf '#!/bin/sh\\n' > "$BIN" && chmod 755 "$BIN" && exec systemd-analyze "$@"`;
  return execa('unshare', ['-m', 'sh', '-c', script, 'sh', ...(user ? ['--user'] : []), ...command, path], {
    env: { BIN, XDG_RUNTIME_DIR: runtime },
    reject: false,
  });
}

describe.each([
  { name: 'the system unit', path: SYSTEM, user: false },
  { name: 'the user unit', path: USER, user: true },
])('$name', ({ path, user }) => {
  it('passes systemd-analyze verify without a word', async () => {
    const r = await analyze(path, user);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it('restarts without giving up, reloads with SIGHUP, stops the whole cgroup, keeps state where the daemon is told', () => {
    const u = unit(path);
    expect(get(u, 'Unit', 'StartLimitIntervalSec')).toBe('0');
    expect(get(u, 'Service', 'Restart')).toBe('on-failure');
    expect(get(u, 'Service', 'ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(get(u, 'Service', 'KillMode')).toBe('control-group');
    expect(get(u, 'Service', 'NoNewPrivileges')).toBe('yes');
    expect(get(u, 'Service', 'StateDirectory')).toBe('tunnel-manager');
    expect(get(u, 'Service', 'RuntimeDirectory')).toBe('tunnel-manager');
    expect(get(u, 'Service', 'ConfigurationDirectory')).toBe('tunnel-manager');
    // Longer than the daemon's own bounded shutdown (15 s), so that it ends its ssh itself.
    expect(Number(get(u, 'Service', 'TimeoutStopSec'))).toBeGreaterThan(15);
    const exec = get(u, 'Service', 'ExecStart')!;
    expect(exec).toBe(`tunnel-manager serve --config \${CONFIGURATION_DIRECTORY}/config.yaml --state-dir \${STATE_DIRECTORY} --socket \${RUNTIME_DIRECTORY}/api.sock`);
    if (!user) {
      expect(get(u, 'Service', 'ProtectSystem')).toBe('strict');
      // Read-only, not "yes": the daemon's user reads its keys and SSH config in ~/.ssh.
      expect(get(u, 'Service', 'ProtectHome')).toBe('read-only');
      expect(get(u, 'Service', 'PrivateTmp')).toBe('yes');
      expect(get(u, 'Service', 'User')).toBeTruthy();
      expect(get(u, 'Install', 'WantedBy')).toBe('multi-user.target');
    } else {
      expect(get(u, 'Install', 'WantedBy')).toBe('default.target');
    }
  });
});

describe('the system unit\'s hardening', () => {
  it('is rated as docs/systemd.md says by systemd-analyze security', async () => {
    const r = await analyze(SYSTEM, false, ['security', '--offline=yes']);
    const level = /Overall exposure level for tunnel-manager\.service: (\d+\.\d)/.exec(r.stdout + r.stderr);
    expect(level, r.stdout + r.stderr).not.toBeNull();
    expect(readFileSync(join(REPO, 'docs/systemd.md'), 'utf8')).toContain(`rates the unit ${level![1]} ("OK")`);
    expect(Number(level![1])).toBeLessThan(2);
  });
});

describe('what the units run', () => {
  it("the user unit's folders are the daemon's own defaults, so tunnel-cli finds the socket without options", () => {
    // systemd --user: RuntimeDirectory under $XDG_RUNTIME_DIR, StateDirectory under $XDG_STATE_HOME (~/.local/state).
    const env = { XDG_RUNTIME_DIR: '/run/user/1000' };
    expect(defaultSocketPath(env, 1000)).toBe('/run/user/1000/tunnel-manager/api.sock');
    expect(defaultStateDir({}, '/home/me')).toBe('/home/me/.local/state/tunnel-manager');
  });

  it('ExecStart starts the daemon in the folders systemd makes, and ExecReload makes it read the config again', async () => {
    const u = unit(SYSTEM);
    const dirs = { CONFIGURATION_DIRECTORY: join(tmp, 'etc'), STATE_DIRECTORY: join(tmp, 'state'), RUNTIME_DIRECTORY: join(tmp, 'run') };
    for (const d of Object.values(dirs)) mkdirSync(d, { mode: 0o700 });
    writeFileSync(join(dirs.CONFIGURATION_DIRECTORY, 'config.yaml'), 'tunnels: []\n');
    // systemd's own expansion of ${VAR} in the command line, then the program it names is ours.
    const argv = get(u, 'Service', 'ExecStart')!.replace(/\$\{(\w+)\}/g, (_, v: string) => dirs[v as keyof typeof dirs]).split(' ');
    expect(argv[0]).toBe('tunnel-manager');
    const apiPort = await port();
    const child = spawn(process.execPath, [MAIN, ...argv.slice(1), '--listen', `127.0.0.1:${apiPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d) => (log += String(d)));
    child.stderr.on('data', (d) => (log += String(d)));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const reloads = () => log.split('\n').filter((l) => l.includes('"event":"reload"')).length;
      await waitUntil(() => reloads() >= 1 && log.includes('"event":"started"'), () => log);
      const before = reloads();
      const reload = get(u, 'Service', 'ExecReload')!.replace('$MAINPID', String(child.pid)).split(' ');
      const r = await execa(reload[0]!, reload.slice(1), { reject: false });
      expect(r.exitCode).toBe(0);
      await waitUntil(() => reloads() > before, () => log);
      // Its socket and state are where the unit said.
      expect(readdirSync(dirs.RUNTIME_DIRECTORY)).toContain('api.sock');
      expect(readdirSync(dirs.STATE_DIRECTORY).length).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

async function waitUntil(cond: () => boolean, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out; the daemon's log:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
