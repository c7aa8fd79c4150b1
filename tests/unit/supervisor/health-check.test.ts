// The pieces the health monitor runs: one health_check attempt over real sockets, the
// ssh config watcher on real files, and the process state from /proc.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { watchSshConfig } from '../../../src/ssh-config/watch.js';
import { runHealthCheck } from '../../../src/supervisor/health/health-check-run.js';
import { ProcessSweep, statState } from '../../../src/supervisor/process/process-sweep.js';
import { ManualClock } from './fakes.js';

const never = new AbortController().signal;
const listen = async (server: net.Server | http.Server): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as net.AddressInfo).port;
};
const freePortNumber = async () => {
  const s = net.createServer();
  const p = await listen(s);
  await new Promise((r) => s.close(r));
  return p;
};

describe('a health_check attempt', () => {
  const servers: (net.Server | http.Server)[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  it('tcp passes when the connection stays open, fails when it is closed at once or refused', async () => {
    const open = net.createServer(() => undefined);
    const closing = net.createServer((s) => s.destroy());
    servers.push(open, closing);
    const check = { type: 'tcp' as const, interval: 2, failures: 1, path: '/' };
    expect(await runHealthCheck(check, { host: '127.0.0.1', port: await listen(open) }, never)).toEqual({ ok: true, detail: '' });
    const closed = await runHealthCheck(check, { host: '127.0.0.1', port: await listen(closing) }, never);
    expect(closed).toMatchObject({ ok: false, detail: expect.stringMatching(/was closed at once$/) });
    const refused = await runHealthCheck(check, { host: '127.0.0.1', port: await freePortNumber() }, never);
    expect(refused).toMatchObject({ ok: false, detail: expect.stringContaining('ECONNREFUSED') });
  });

  it('http passes on any answer (an error status too) and fails when none comes in time', async () => {
    const answering = http.createServer((_q, r) => {
      r.statusCode = 503;
      r.end('down for maintenance');
    });
    const silent = net.createServer(() => undefined);
    servers.push(answering, silent);
    const check = { type: 'http' as const, interval: 1, failures: 1, path: '/ready' };
    expect(await runHealthCheck(check, { host: '127.0.0.1', port: await listen(answering) }, never)).toEqual({ ok: true, detail: '' });
    const p = await listen(silent);
    expect(await runHealthCheck(check, { host: '127.0.0.1', port: p }, never)).toEqual({ ok: false, detail: `no answer to GET http://127.0.0.1:${p}/ready within 1000 ms` });
  });
});

describe('process state', () => {
  it('reads the state letter after the last ")" of /proc/<pid>/stat', () => {
    expect(statState('123 (ssh) S 1 2 3')).toBe('S');
    expect(statState('123 (a) T (b)) T 1 2')).toBe('T');
    expect(statState('')).toBeNull();
  });

  it('one sweep on one timer reads every watched process: T while stopped, null once gone, nothing after unwatch', async () => {
    const clock = new ManualClock();
    const sweep = new ProcessSweep(clock, 1_000);
    const a = spawn('sleep', ['30']);
    const b = spawn('sleep', ['30']);
    try {
      await Promise.all([a, b].map((c) => new Promise((r) => c.once('spawn', r))));
      const seen: Record<string, (string | null)[]> = { a: [], b: [], gone: [] };
      const unA = sweep.watch(a.pid!, (s) => seen.a!.push(s));
      sweep.watch(b.pid!, (s) => seen.b!.push(s));
      const unGone = sweep.watch(2 ** 22 + 12345, (s) => seen.gone!.push(s));
      // Three watches, one timer.
      expect(clock.pending()).toBe(1);
      await clock.advance(1_000);
      expect(seen.a).toEqual([expect.stringMatching(/^[RS]$/)]);
      expect(seen.b).toEqual([expect.stringMatching(/^[RS]$/)]);
      expect(seen.gone).toEqual([null]);
      b.kill('SIGSTOP');
      let state: string | null = null;
      const probe = sweep.watch(b.pid!, (s) => (state = s));
      for (let i = 0; i < 50 && state !== 'T'; i++) {
        await new Promise((r) => setTimeout(r, 10));
        sweep.sweep();
      }
      probe();
      expect(state).toBe('T');
      await clock.advance(1_000);
      expect(seen.b!.at(-1)).toBe('T');
      unA();
      unA();
      const before = seen.a!.length;
      await clock.advance(1_000);
      expect(seen.a).toHaveLength(before);
      b.kill('SIGCONT');
      b.kill('SIGKILL');
      await new Promise((r) => b.once('exit', r));
      await clock.advance(1_000);
      expect(seen.b!.at(-1)).toBeNull();
      unGone();
      expect(sweep.size).toBe(1);
    } finally {
      a.kill('SIGKILL');
      b.kill('SIGKILL');
    }
  });

  it('stops its timer when nothing is watched and starts it again for the next watch', async () => {
    const clock = new ManualClock();
    const sweep = new ProcessSweep(clock, 1_000);
    const un = sweep.watch(process.pid, () => undefined);
    expect(clock.pending()).toBe(1);
    un();
    await clock.advance(0);
    expect(clock.pending()).toBe(0);
    const calls: (string | null)[] = [];
    sweep.watch(process.pid, (s) => calls.push(s));
    await clock.advance(1_000);
    expect(calls).toEqual([expect.stringMatching(/^[RS]$/)]);
  });
});

describe('the ssh config watcher', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tm-sshw-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports an edit of a watched file (also by rename) and a new file in an Include folder, not other files', async () => {
    const cfg = join(dir, 'config');
    const incDir = join(dir, 'conf.d');
    writeFileSync(cfg, 'Host a\n');
    rmSync(incDir, { recursive: true, force: true });
    mkdirSync(incDir);
    let calls = 0;
    const w = watchSshConfig(() => calls++, (e) => { throw e; }, 50);
    w.watch([cfg], [incDir]);
    await new Promise((r) => setTimeout(r, 300));
    try {
      writeFileSync(join(dir, 'known_hosts'), 'x\n');
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(0);
      writeFileSync(join(dir, '.config.tmp'), 'Host a\n  Port 2222\n');
      renameSync(join(dir, '.config.tmp'), cfg);
      await until(() => calls === 1);
      writeFileSync(join(incDir, 'extra.conf'), 'Host b\n');
      await until(() => calls === 2);
    } finally {
      await w.close();
    }
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 30));
  expect(ok()).toBe(true);
}
