// Packets dropped: sshd runs in a network namespace of its own, joined to ours by a
// veth pair, and `iptables -j DROP` inside the namespace blackholes it — the server
// neither answers nor refuses, as behind a dead link. The namespace is created here
// and removed in afterAll even when a test fails; a machine that cannot create it
// fails this suite instead of skipping it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS helper shared with the scripts
import { createNetns, startNetnsSshd } from '../../scripts/lib/netns.mjs';
import {
  RECOVERY_BOUND_MS,
  configYaml,
  detectionBoundMs,
  echoOn,
  port,
  recordEvents,
  roundTrip,
  runningAgain,
  sleep,
  sshChildren,
  startDaemon,
  statusOf,
  until,
  type Daemon,
} from './helpers.js';

const INTERVAL = 1;
const COUNT_MAX = 2;

describe('packets dropped (iptables DROP inside a network namespace)', () => {
  let netns: any;
  let server: any;
  let echo: { close(): Promise<void> } | undefined;
  let d: Daemon | undefined;
  let echoPort: number;
  let lPort: number;
  let rPort: number;

  beforeAll(async () => {
    netns = createNetns();
    // The server drops sessions whose client went silent (ClientAlive), as a server
    // carrying -R tunnels should: otherwise the dead session keeps holding the remote
    // port after the link is back, until the server's TCP notices (see docs/reliability.md).
    server = await startNetnsSshd(netns, { sshdOptions: ['ClientAliveInterval 1', 'ClientAliveCountMax 2'] });
    echoPort = await port();
    echo = await echoOn(echoPort, netns.hostAddr);
    lPort = await port();
    rPort = await port();
    const keepAlive = { ServerAliveInterval: INTERVAL, ServerAliveCountMax: COUNT_MAX };
    d = await startDaemon({
      config: configYaml({
        // -L: our port, through the namespace's sshd, back to the echo on our side of the veth.
        bring: { remote_host: server.alias, remote_port: `${netns.hostAddr}:${echoPort}`, local_port: `127.0.0.1:${lPort}`, direction: 'remote_to_local', ssh_options: keepAlive },
        // -R: the namespace's address, back to the same echo.
        expose: { remote_host: server.alias, remote_port: `${netns.nsAddr}:${rPort}`, local_port: `${netns.hostAddr}:${echoPort}`, direction: 'local_to_remote', ssh_options: keepAlive },
      }),
      sshConfigPath: server.sshConfigPath,
    });
    await d.waitState('bring', 'RUNNING');
    await d.waitState('expose', 'RUNNING');
  });

  afterAll(async () => {
    await d?.cleanup();
    await echo?.close();
    await server?.stop().catch(() => undefined);
    netns?.destroy();
  });

  it('both tunnels carry data through the namespace', async () => {
    expect(await roundTrip(lPort, 'via veth -L')).toBe('via veth -L');
    expect(await roundTrip(rPort, 'via veth -R', netns.nsAddr)).toBe('via veth -R');
  });

  it('leaves RUNNING within the ServerAlive bound, never claims RUNNING while packets drop, carries data again once they flow', async () => {
    const dd = d!;
    const rec = await recordEvents(dd);
    try {
      const old = { bring: await statusOf(dd, 'bring'), expose: await statusOf(dd, 'expose') };
      const t0 = Date.now();
      netns.drop();
      const bound = detectionBoundMs(INTERVAL, COUNT_MAX);
      for (const name of ['bring', 'expose']) {
        const left = await until(`${name} to leave RUNNING`, () => rec.statuses(name).find((x) => x.at >= t0 && x.data.status !== 'RUNNING'), bound + 2_000, 25);
        expect(left.at - t0).toBeLessThan(bound);
        expect(left.data.last_error).toMatch(/not responding|timed out|timeout/i);
      }
      // Keep the link dead longer than ssh's ConnectTimeout (10 s): attempts made during
      // the outage time out, and every one of them must leave the status off RUNNING.
      await sleep(12_000);
      for (const name of ['bring', 'expose']) expect((await statusOf(dd, name)).status).not.toBe('RUNNING');
      await expect(roundTrip(lPort, 'x', '127.0.0.1', 1_000)).rejects.toThrow();

      const t1 = Date.now();
      netns.undrop();
      const b = await runningAgain(dd, 'bring', {
        oldPid: old.bring.pid, sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 10_000,
        check: async () => expect(await roundTrip(lPort, 'link back -L')).toBe('link back -L'),
      });
      const e = await runningAgain(dd, 'expose', {
        oldPid: old.expose.pid, sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 10_000,
        check: async () => expect(await roundTrip(rPort, 'link back -R', netns.nsAddr)).toBe('link back -R'),
      });
      for (const name of ['bring', 'expose']) {
        const during = rec.statuses(name).filter((x) => x.at > t0 + bound && x.at < t1);
        expect(during.filter((x) => x.data.status === 'RUNNING')).toEqual([]);
      }
      expect({ bring: b.tookMs < RECOVERY_BOUND_MS, expose: e.tookMs < RECOVERY_BOUND_MS, took: [b.tookMs, e.tookMs] }).toMatchObject({ bring: true, expose: true });
      // Both tunnels on one shared connection (SPEC §14).
      expect(sshChildren(dd.dir).length).toBe(1);
    } finally {
      rec.close();
    }
  });
});
