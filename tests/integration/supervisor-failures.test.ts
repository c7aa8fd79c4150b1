// Faults against a real sshd: what a retry cannot fix is FAILED without a retry storm;
// what it can is RETRYING, and the tunnel is back soon after the fault ends.
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSupervisor } from '../../src/supervisor/index.js';
import type { SupervisorApi } from '../../src/supervisor/index.js';
import { port, roundTrip, sharedServers, sleep, spec, type Sshd, sshd, tempDir, waitFor, waitState } from './supervisor-fixture.js';

const fx = sharedServers();

async function supervisor(sshConfigPath = fx.server.sshConfigPath, stateDir = tempDir()): Promise<SupervisorApi> {
  const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath, stateDir, mode: 'default' });
  fx.supervisors.push(sup);
  return sup;
}

// Logins the server turned down (the harness's own port check is a connection too, so count these).
const refusedLogins = (s: Sshd) => s.log.split('\n').filter((l) => l.startsWith('Failed publickey')).length;

function occupy(p: number, host = '127.0.0.1'): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer((s) => s.destroy());
    srv.once('error', reject);
    srv.listen(p, host, () => resolve(srv));
  });
}
const release = (srv: net.Server) => new Promise<void>((r) => srv.close(() => r()));

describe('failures a retry will not fix', () => {
  it('a refused key is FAILED with the authentication reason, and ssh is not tried again', async () => {
    const sup = await supervisor();
    const t = spec({ name: 'bad', remote_host: 'badkey', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local' });
    const before = refusedLogins(fx.server);
    await sup.apply([t]);
    const failed = await waitState(sup, t.hash, 'FAILED');
    expect(failed.last_error).toMatch(/^authentication failed: .*Permission denied \(publickey\)/);
    expect(failed.pid).toBeNull();
    expect(failed.next_retry_at).toBeNull();
    expect(failed.last_exit?.code).toBe(255);
    await sleep(3_000);
    expect(refusedLogins(fx.server) - before).toBe(1);
    expect(sup.status(t.hash)?.status).toBe('FAILED');
    expect(sup.status(t.hash)?.restarts).toBe(0);
  });

  it('an explicit start tries a FAILED tunnel again', async () => {
    const sup = await supervisor();
    const t = spec({ name: 'bad2', remote_host: 'badkey', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local' });
    await sup.apply([t]);
    await waitState(sup, t.hash, 'FAILED');
    const before = refusedLogins(fx.server);
    await sup.start(t.hash);
    await waitFor('a second attempt', () => refusedLogins(fx.server) > before);
    await waitState(sup, t.hash, 'FAILED');
  });

  it('an unknown host alias is FAILED', async () => {
    const sup = await supervisor();
    const t = spec({ name: 'nohost', remote_host: 'no-such-alias.invalid', remote_port: 80, local_port: await port(), direction: 'remote_to_local' });
    await sup.apply([t]);
    const failed = await waitState(sup, t.hash, 'FAILED');
    expect(failed.last_error).toMatch(/^unknown host: .*Could not resolve hostname no-such-alias\.invalid/);
  });

  it('a changed host key is FAILED; the state dir known_hosts is listed first and receives new keys', async () => {
    const stateDir = tempDir();
    const okSup = await supervisor(fx.server.sshConfigPath, stateDir);
    const t = spec({ name: 'hk', remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local' });
    await okSup.apply([t]);
    await waitState(okSup, t.hash, 'RUNNING');
    const known = join(stateDir, 'known_hosts');
    expect(readFileSync(known, 'utf8')).toContain(`[127.0.0.1]:${fx.server.port}`);
    await okSup.shutdown();

    const fake = join(tempDir(), 'fake');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', fake]);
    const fakeKey = readFileSync(`${fake}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(known, `[127.0.0.1]:${fx.server.port} ${fakeKey}\n`);
    const sup = await supervisor(fx.server.sshConfigPath, stateDir);
    await sup.apply([t]);
    const failed = await waitState(sup, t.hash, 'FAILED');
    expect(failed.last_error).toMatch(/^host key verification failed: /);
  });
});

describe('failures a retry fixes', () => {
  it('a busy local port is RETRYING with the bind error; once freed the tunnel is RUNNING and carries data', async () => {
    const sup = await supervisor();
    const local = await port();
    const blocker = await occupy(local);
    const t = spec({ name: 'busy', remote_host: 'testhost', remote_port: fx.echo.port, local_port: local, direction: 'remote_to_local' });
    await sup.apply([t]);
    const retrying = await waitState(sup, t.hash, 'RETRYING');
    expect(retrying.last_error).toMatch(/^local port is busy: bind \[127\.0\.0\.1\]:\d+: Address already in use/);
    expect(retrying.next_retry_at).not.toBeNull();
    await release(blocker);
    await waitState(sup, t.hash, 'RUNNING');
    expect(await roundTrip(local)).toBe(true);
  });

  it('a taken remote port is RETRYING with the remote forward reason; once freed the tunnel is RUNNING', async () => {
    const sup = await supervisor();
    const remote = await port();
    const blocker = await occupy(remote);
    const t = spec({ name: 'rbusy', remote_host: 'testhost', remote_port: `127.0.0.1:${remote}`, local_port: fx.echo.port, direction: 'local_to_remote' });
    await sup.apply([t]);
    const retrying = await waitState(sup, t.hash, 'RETRYING');
    expect(retrying.last_error).toMatch(/^remote forward refused by the server: (Error: )?remote port forwarding failed for listen port \d+ \(the port may be taken on the server\)/);
    await release(blocker);
    await waitState(sup, t.hash, 'RUNNING');
    expect(await roundTrip(remote)).toBe(true);
  });

  it('a remote bind address the server cannot take names GatewayPorts', async () => {
    const sup = await supervisor();
    const t = spec({ name: 'gw', remote_host: 'testhost', remote_port: `10.255.255.1:${await port()}`, local_port: fx.echo.port, direction: 'local_to_remote' });
    await sup.apply([t]);
    const retrying = await waitState(sup, t.hash, 'RETRYING');
    expect(retrying.last_error).toMatch(/GatewayPorts clientspecified.*10\.255\.255\.1/);
  });

  it('server down: RETRYING without a retry storm; server back: RUNNING again (the recovery time is measured by scripts/bench-recovery)', async () => {
    const own = await sshd();
    try {
      const sup = await supervisor(own.sshConfigPath);
      const local = await port();
      const t = spec({ name: 'down', remote_host: 'testhost', remote_port: fx.echo.port, local_port: local, direction: 'remote_to_local' });
      await sup.apply([t]);
      const first = await waitState(sup, t.hash, 'RUNNING');
      await own.kill();
      await waitFor('the refusal', () => sup.status(t.hash)?.last_error?.includes('Connection refused'));
      expect(sup.status(t.hash)?.status).toMatch(/RETRYING|STARTING/);
      const restartsBefore = sup.status(t.hash)?.restarts ?? 0;
      await sleep(3_000);
      // At most one login per second while down.
      expect((sup.status(t.hash)?.restarts ?? 0) - restartsBefore).toBeLessThanOrEqual(4);
      await own.start();
      const back = await waitFor('RUNNING with a new child', () => {
        const s = sup.status(t.hash);
        return s?.status === 'RUNNING' && s.pid !== first.pid ? s : undefined;
      });
      expect(back.last_error).toBeNull();
      expect(await roundTrip(local)).toBe(true);
    } finally {
      await own.kill();
    }
  });
});
