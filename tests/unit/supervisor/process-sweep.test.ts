import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessSweep } from '../../../src/supervisor/process/process-sweep.js';
import { systemClock } from '../../../src/supervisor/clock.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A sleeping process whose command name (what /proc/<pid>/stat shows in parentheses) is `comm`. */
async function sleeper(comm: string): Promise<ChildProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'sweep-'));
  dirs.push(dir);
  const exe = join(dir, comm);
  copyFileSync('/bin/sleep', exe);
  const child = spawn(exe, ['30'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((r) => child.once('spawn', r));
  return child;
}

const until = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('ProcessSweep', () => {
  it.each(['sleeper', 'a) T (x', 'R) S'])('reads the state letter of a process named %j: running, stopped, gone', async (comm) => {
    const child = await sleeper(comm);
    const sweep = new ProcessSweep(systemClock, 60_000);
    const states: (string | null)[] = [];
    const unwatch = sweep.watch(child.pid!, (s) => states.push(s));
    // Sleeping once it has started (R while it loads).
    await until(() => (sweep.sweep(), states.at(-1) === 'S'));
    expect(states.at(-1)).toBe('S');
    child.kill('SIGSTOP');
    await until(() => (sweep.sweep(), states.at(-1) === 'T'));
    expect(states.at(-1)).toBe('T');
    child.kill('SIGCONT');
    await until(() => (sweep.sweep(), states.at(-1) === 'S'));
    expect(states.at(-1)).toBe('S');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    sweep.sweep();
    expect(states.at(-1)).toBeNull();
    unwatch();
    expect(sweep.size).toBe(0);
  });
});
