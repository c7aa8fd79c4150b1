// One daemon per state dir and per socket (issue 23): a second built daemon on the
// same state dir, or on the same socket, exits 1 naming the first one's pid and the
// flags that keep daemons apart, and leaves the first untouched; once the first is
// killed with -9, its leftover lock and socket do not block a new start. A state dir
// another account owns stops the start with the fix.
import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, port, startDaemon, type Daemon } from '../daemon-harness.js';

let dir: string;
let sshConfig: string;
let first: Daemon;
const CONFIG = 'tunnels: []\n';

/** Runs a daemon that is expected not to start: its exit code and stderr. */
async function refusedStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, '--config', first.configPath, '--ssh-config', sshConfig, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tm-second-'));
  sshConfig = join(dir, 'ssh_config');
  writeFileSync(sshConfig, '', { mode: 0o600 });
  first = await startDaemon({ config: CONFIG, sshConfigPath: sshConfig });
}, 30_000);

afterAll(async () => {
  await first?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('a second daemon', () => {
  it('on the same state dir (another socket and port) exits 1 naming the first one\'s pid and the flags', async () => {
    const r = await refusedStart(['--state-dir', first.stateDir, '--socket', join(dir, 'other.sock'), '--listen', `127.0.0.1:${await port()}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`another tunnel-manager daemon (pid ${first.child.pid}`);
    expect(r.stderr).toContain(`already uses the state dir ${first.stateDir}`);
    expect(r.stderr).toMatch(/--state-dir, --socket and --listen/);
    expect((await first.api('/health')).ok).toBe(true);
  });

  it('on the same socket (another state dir and port) exits 1 naming the first one\'s pid and the flags', async () => {
    const r = await refusedStart(['--state-dir', join(dir, 'other-state'), '--socket', first.socketPath, '--listen', `127.0.0.1:${await port()}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`another daemon (pid ${first.child.pid}) is already listening on ${first.socketPath}`);
    expect(r.stderr).toContain('--socket, --state-dir and --listen');
    expect((await first.api('/health')).ok).toBe(true);
  });

  it('starts on the state dir and socket of a daemon killed with -9', async () => {
    await first.stop('SIGKILL');
    const next = await startDaemon({ config: CONFIG, sshConfigPath: sshConfig, dir: first.dir });
    try {
      expect((await next.api('/health')).ok).toBe(true);
      expect(next.stderr()).toContain('"event":"started"');
    } finally {
      await next.stop();
    }
  });

  it('on a state dir another account owns exits 1 with the fix', async () => {
    const foreign = join(dir, 'foreign-state');
    mkdirSync(foreign, { mode: 0o700 });
    chownSync(foreign, 65534, 65534);
    const r = await refusedStart(['--state-dir', foreign, '--socket', join(dir, 'f.sock'), '--listen', `127.0.0.1:${await port()}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`refusing the state dir ${foreign}`);
    expect(r.stderr).toContain(`chown -R ${process.getuid!()} ${foreign}`);
  });
});
