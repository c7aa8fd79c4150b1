// Status never lies (SPEC §4, §5): the cases where a tunnel used to look fine while
// carrying nothing, each reproduced against a real sshd and now truthful — health
// degraded with ssh's own cause, FAILED when the server refuses forwarding, a taken
// -R port named, GatewayPorts named, a frozen client seen and restarted.
import { appendFileSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  configYaml,
  echoServer,
  holdPort,
  port,
  recordEvents,
  roundTrip,
  sleep,
  sshd,
  startDaemon,
  statusOf,
  tunnelYaml,
  until,
  type Daemon,
  type Sshd,
} from './helpers.js';

/** Connects and resolves once the connection is closed or has lived `ms`: what a client of a broken forward sees. */
function touch(p: number, ms = 500): Promise<void> {
  return roundTrip(p, 'x', '127.0.0.1', ms).then(() => undefined, () => undefined);
}

async function metric(d: Daemon, name: string, tunnel: string): Promise<number | undefined> {
  const text = await (await d.api('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`name="${tunnel}"`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

let echoPort: number;
let echo: { close(): Promise<void> };
beforeAll(async () => {
  echoPort = await port();
  echo = await echoServer(echoPort);
});
afterAll(async () => {
  await echo?.close();
});

describe('a server that forwards', () => {
  let server: Sshd;
  let d: Daemon;
  let closedPort: number;
  let lPort: number;
  let target: { close(): Promise<void> } | null = null;

  beforeAll(async () => {
    server = await sshd();
    closedPort = await port();
    lPort = await port();
    d = await startDaemon({
      sshConfigPath: server.sshConfigPath,
      config: configYaml({ closed: { remote_host: server.alias, remote_port: closedPort, local_port: lPort, direction: 'remote_to_local' } }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await target?.close();
    await server?.stop();
  });

  it('-L to a target port where nothing listens: RUNNING but degraded with ssh\'s cause, ok again once the target answers', async () => {
    const running = await d.waitState('closed', 'RUNNING');
    expect(running.health).toMatchObject({ state: 'ok', reason: null });
    await touch(lPort);
    const degraded = await d.waitFor('health degraded', async () => {
      const t = await statusOf(d, 'closed');
      return t.health.state === 'degraded' ? t : undefined;
    }, 5_000);
    expect(degraded.status).toBe('RUNNING');
    expect(degraded.health.reason).toBe('connections through the forward fail: ssh reports "connect failed: Connection refused"');
    expect(await metric(d, 'tunnel_up', 'closed')).toBe(1);
    expect(await metric(d, 'tunnel_healthy', 'closed')).toBe(0);

    target = await echoServer(closedPort);
    expect(await roundTrip(lPort, 'now it answers')).toBe('now it answers');
    const ok = await d.waitFor('health ok', async () => {
      const t = await statusOf(d, 'closed');
      return t.health.state === 'ok' ? t : undefined;
    }, 5_000);
    expect(ok.health.reason).toBeNull();
    expect(await metric(d, 'tunnel_healthy', 'closed')).toBe(1);
  });
});

describe('a server with AllowTcpForwarding no', () => {
  let server: Sshd;
  let d: Daemon;
  let lPort: number;

  beforeAll(async () => {
    server = await sshd({ sshdOptions: ['AllowTcpForwarding no'] });
    lPort = await port();
    const rPort = await port();
    d = await startDaemon({
      sshConfigPath: server.sshConfigPath,
      config: configYaml({
        local: { remote_host: server.alias, remote_port: echoPort, local_port: lPort, direction: 'remote_to_local' },
        remote: { remote_host: server.alias, remote_port: rPort, local_port: echoPort, direction: 'local_to_remote' },
      }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await server?.stop();
  });

  it('-R is FAILED with the server\'s refusal, not retried as a taken port', async () => {
    const failed = await d.waitState('remote', 'FAILED', 10_000);
    expect(failed.last_error).toBe('the server refuses port forwarding (AllowTcpForwarding, PermitOpen or a no-port-forwarding key option): Server has disabled port forwarding.');
    expect(failed.last_error).not.toMatch(/may be taken/);
    await sleep(1_500);
    expect(await statusOf(d, 'remote')).toMatchObject({ status: 'FAILED', restarts: 0, pid: null });
  });

  it('-L is FAILED with the cause at the first connection the server prohibits', async () => {
    await d.waitState('local', 'RUNNING');
    await touch(lPort);
    const failed = await d.waitState('local', 'FAILED', 5_000);
    expect(failed.last_error).toMatch(/^the server refuses port forwarding .*: channel \d+: open failed: administratively prohibited/);
    await sleep(1_500);
    expect(await statusOf(d, 'local')).toMatchObject({ status: 'FAILED', pid: null });
  });
});

describe('-R on the server', () => {
  let server: Sshd;
  let wide: Sshd;
  let d: Daemon;
  let rPort: number;
  let widePort: number;
  let holder: { close(): Promise<void> } | null;

  beforeAll(async () => {
    server = await sshd();
    wide = await sshd({ sshdOptions: ['GatewayPorts no'] });
    // Reached as the first server's alias with its Port: let its key in too.
    appendFileSync(join(wide.dir, 'authorized_keys'), readFileSync(`${server.clientKey}.pub`));
    rPort = await port();
    widePort = await port();
    // Another program on the server's 127.0.0.1:P (server and daemon share this machine).
    holder = await holdPort(rPort, '127.0.0.1', 'another program');
    d = await startDaemon({
      sshConfigPath: server.sshConfigPath,
      config:
        configYaml({ bare: { remote_host: server.alias, remote_port: rPort, local_port: echoPort, direction: 'local_to_remote' } }) +
        tunnelYaml('wide', { remote_host: wide.alias, remote_port: `0.0.0.0:${widePort}`, local_port: echoPort, direction: 'local_to_remote', ssh_options: { Port: wide.port } }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await holder?.close();
    await server?.stop();
    await wide?.stop();
  });

  it('a bare port binds 127.0.0.1 by name: with it taken, RETRYING with the cause, never RUNNING; RUNNING once it is free', async () => {
    const events = await recordEvents(d);
    const retrying = await d.waitFor('bare RETRYING with the cause', async () => {
      const t = await statusOf(d, 'bare');
      return t.status === 'RETRYING' && t.last_error ? t : undefined;
    }, 10_000);
    expect(retrying.last_error).toMatch(/remote forward refused by the server: .*listen port \d+ \(the port may be taken on the server\)/);
    await sleep(1_000);
    expect(events.statuses('bare').some((e) => e.data.status === 'RUNNING')).toBe(false);
    expect(await roundTrip(rPort, 'hello', '127.0.0.1').catch(() => 'nothing')).toBe('another program');

    await holder!.close();
    holder = null;
    await d.waitState('bare', 'RUNNING', 15_000);
    expect(await roundTrip(rPort, 'through the tunnel', '127.0.0.1')).toBe('through the tunnel');
    events.close();
  });

  it('a non-loopback bind to a server with GatewayPorts no: RUNNING, health unknown naming GatewayPorts', async () => {
    const t = await d.waitState('wide', 'RUNNING', 10_000);
    expect(t.health.state).toBe('unknown');
    expect(t.health.reason).toMatch(/0\.0\.0\.0 needs "GatewayPorts clientspecified" \(or yes\) on the server/);
    expect(await metric(d, 'tunnel_healthy', 'wide')).toBe(0);
  });
});

describe('a frozen client (SIGSTOP)', () => {
  let server: Sshd;
  let d: Daemon;
  let web: http.Server;
  let webPort: number;

  beforeAll(async () => {
    server = await sshd();
    webPort = await port();
    web = http.createServer((_req, res) => res.end('fine'));
    await new Promise<void>((r) => web.listen(webPort, '127.0.0.1', r));
    const [plainPort, checkedPort] = [await port(), await port()];
    d = await startDaemon({
      sshConfigPath: server.sshConfigPath,
      config:
        configYaml({ plain: { remote_host: server.alias, remote_port: webPort, local_port: plainPort, direction: 'remote_to_local' } }) +
        tunnelYaml('checked', { remote_host: server.alias, remote_port: webPort, local_port: checkedPort, direction: 'remote_to_local' }) +
        '    health_check: { type: http, interval: 1, failures: 2, path: /ready }\n',
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await new Promise((r) => web?.close(r));
    await server?.stop();
  });

  it('is degraded while stopped and ok again once continued', async () => {
    const t = await d.waitState('plain', 'RUNNING');
    process.kill(t.pid, 'SIGSTOP');
    try {
      const stopped = await d.waitFor('plain degraded', async () => {
        const s = await statusOf(d, 'plain');
        return s.health.state === 'degraded' ? s : undefined;
      }, 5_000);
      expect(stopped).toMatchObject({ status: 'RUNNING', pid: t.pid });
      expect(stopped.health.reason).toMatch(/the ssh process is stopped \(state T/);
    } finally {
      process.kill(t.pid, 'SIGCONT');
    }
    await d.waitFor('plain ok', async () => (await statusOf(d, 'plain')).health.state === 'ok', 5_000);
  });

  it('with a health_check, a frozen client is restarted and carries data again', async () => {
    const t = await d.waitState('checked', 'RUNNING');
    await d.waitFor('a passing check', async () => (await statusOf(d, 'checked')).health.state === 'ok');
    process.kill(t.pid, 'SIGSTOP');
    const again = await until('checked restarted with a new ssh', async () => {
      const s = await statusOf(d, 'checked');
      return s.status === 'RUNNING' && s.pid !== t.pid ? s : undefined;
    }, 20_000);
    expect(again.restarts).toBeGreaterThan(t.restarts);
    expect(() => process.kill(t.pid, 0)).toThrow();
    const logs = (await d.json<{ lines: string[] }>(`/logs/${t.hash}`)).lines;
    expect(logs.some((l) => /health check failed 2 times in a row .*: restarting/.test(l))).toBe(true);
    await d.waitFor('checked ok', async () => (await statusOf(d, 'checked')).health.state === 'ok', 5_000);
  });
});
