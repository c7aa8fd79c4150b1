// The pieces the health monitor runs: one health_check attempt over real sockets, the
// ssh config watcher on real files, and the process state from /proc.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { watchSshConfig } from '../../src/ssh-config/watch.js';
import { runHealthCheck } from '../../src/supervisor/health-check-run.js';
import { processState } from '../../src/supervisor/health-monitor.js';

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
  it('reads T for a stopped process and something else once it runs', async () => {
    const child = spawn('sleep', ['30']);
    try {
      await new Promise((r) => child.once('spawn', r));
      expect(await processState(child.pid!)).toMatch(/^[RS]$/);
      child.kill('SIGSTOP');
      for (let i = 0; i < 50 && (await processState(child.pid!)) !== 'T'; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await processState(child.pid!)).toBe('T');
      child.kill('SIGCONT');
    } finally {
      child.kill('SIGKILL');
    }
    expect(await processState(2 ** 22 + 12345)).toBeNull();
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
