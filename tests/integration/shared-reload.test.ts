// Reloads on a shared connection (SPEC §14) against a real sshd: a renamed tunnel (a
// new hash, the same forward) takes over its predecessor's listener, which never goes
// down; a tunnel moved to another port listens there and frees the old one; the last
// tunnel to hold a forward cancels it.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSupervisor, type SupervisorApi } from '../../src/supervisor/index.js';
import { isFree, port, roundTrip, sharedServers, spec, tempDir, waitFor, waitState } from './supervisor-fixture.js';

const fx = sharedServers();

async function supervisor(): Promise<SupervisorApi> {
  const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: fx.server.sshConfigPath, stateDir: tempDir(), mode: 'default' });
  fx.supervisors.push(sup);
  return sup;
}

const tunnel = (name: string, localPort: number) =>
  spec({ name, remote_host: 'testhost', remote_port: fx.echo.port, local_port: localPort, direction: 'remote_to_local' });

/** Connects to `p` over and over until stopped; counts the connections refused. */
function keepConnecting(p: number): { stop(): Promise<{ tries: number; refused: number }> } {
  let running = true;
  let tries = 0;
  let refused = 0;
  const loop = (async () => {
    while (running) {
      tries++;
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect({ port: p, host: '127.0.0.1' }, () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
      if (!ok) refused++;
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { tries, refused };
    },
  };
}

describe('a reload on a shared connection', () => {
  it('a renamed tunnel takes over the listener: no connection refused meanwhile, the same master, the neighbour untouched', async () => {
    const sup = await supervisor();
    const [pa, pb] = [await port(), await port()];
    const a = tunnel('a', pa);
    const b = tunnel('b', pb);
    await sup.apply([a, b]);
    const before = await waitState(sup, a.hash, 'RUNNING');
    const neighbour = await waitState(sup, b.hash, 'RUNNING');
    const renamed = tunnel('a-renamed', pa);
    expect(renamed.hash).not.toBe(a.hash);

    const probe = keepConnecting(pa);
    const report = await sup.apply([renamed, b]);
    const after = await waitState(sup, renamed.hash, 'RUNNING');
    const seen = await probe.stop();

    expect(report).toMatchObject({ added: [renamed.hash], removed: [a.hash], unchanged: [b.hash] });
    expect(sup.status(a.hash)).toBeUndefined();
    expect(seen.tries).toBeGreaterThan(0);
    expect(seen.refused).toBe(0);
    expect(after.pid).toBe(before.pid);
    expect(after.connection).toEqual(before.connection);
    expect(sup.status(b.hash)).toMatchObject({ status: 'RUNNING', pid: neighbour.pid });
    expect(await roundTrip(pa)).toBe(true);

    // The last holder of the forward cancels it: the port is free once the tunnel is gone.
    await sup.apply([b]);
    await waitFor('the renamed tunnel\'s port to be free', () => isFree(pa));
    expect(await roundTrip(pb)).toBe(true);
  });

  it('a tunnel moved to another port listens there, frees the old one, and a tunnel moved onto a port just freed gets it', async () => {
    const sup = await supervisor();
    const [p1, p2, p3] = [await port(), await port(), await port()];
    const a = tunnel('a', p1);
    const b = tunnel('b', p2);
    await sup.apply([a, b]);
    await waitState(sup, a.hash, 'RUNNING');
    const neighbour = await waitState(sup, b.hash, 'RUNNING');

    const moved = tunnel('a', p3);
    await sup.apply([moved, b]);
    await waitState(sup, moved.hash, 'RUNNING');
    expect(await roundTrip(p3)).toBe(true);
    await waitFor('the old port to be free', () => isFree(p1));

    // b leaves p2 and a new tunnel takes it in the same reload: the removal goes first.
    const c = tunnel('c', p2);
    const report = await sup.apply([moved, c]);
    expect(report).toMatchObject({ added: [c.hash], removed: [b.hash] });
    const rec = await waitState(sup, c.hash, 'RUNNING');
    expect(rec.pid).toBe(neighbour.pid);
    expect(await roundTrip(p2)).toBe(true);
  });
});
