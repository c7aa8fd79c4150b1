// The order of a reload's removals (apply-order.ts): only a removal whose port an
// incoming tunnel takes goes first; a renamed tunnel on a shared connection (same
// forward, same connection) and removals elsewhere go after the new ones started.
import { describe, expect, it } from 'vitest';
import { removalOrder } from '../../../src/supervisor/plan/apply-order.js';
import type { TunnelPlan } from '../../../src/supervisor/plan/tunnel-plan.js';

function plan(name: string, o: { flag?: '-L' | '-R' | '-D'; local: number; remote: number; target?: string; conn?: string | null }): TunnelPlan {
  const flag = o.flag ?? '-L';
  const listen = flag === '-R' ? o.remote : o.local;
  const conn = o.conn === undefined ? 'c1' : o.conn;
  return {
    spec: { name, local_port: { host: null, port: o.local, text: String(o.local) }, remote_port: { host: null, port: o.remote, text: String(o.remote) } },
    flag,
    shared: conn === null ? null : { connection: { id: conn }, forward: { flag, value: `127.0.0.1:${listen}:${o.target ?? 'localhost'}:${flag === '-R' ? o.local : o.remote}` }, port: listen },
  } as unknown as TunnelPlan;
}

const split = (removed: TunnelPlan[], incoming: TunnelPlan[]) => {
  const r = removalOrder(removed, (p) => p, incoming);
  return { before: r.before.map((p) => p.spec.name), after: r.after.map((p) => p.spec.name) };
};

describe('removalOrder', () => {
  it('a renamed shared tunnel (same forward on the same connection) goes after its successor started', () => {
    expect(split([plan('old', { local: 5000, remote: 22 })], [plan('new', { local: 5000, remote: 22 })])).toEqual({ before: [], after: ['old'] });
  });

  it('the same port with another target, another connection, or no shared connection goes first', () => {
    const old = plan('old', { local: 5000, remote: 22 });
    expect(split([old], [plan('new', { local: 5000, remote: 22, target: 'db' })])).toEqual({ before: ['old'], after: [] });
    expect(split([old], [plan('new', { local: 5000, remote: 22, conn: 'c2' })])).toEqual({ before: ['old'], after: [] });
    expect(split([plan('own', { local: 5000, remote: 22, conn: null })], [plan('own2', { local: 5000, remote: 22, conn: null })])).toEqual({ before: ['own'], after: [] });
  });

  it('-R listens on the remote port: a -R and a -L on different listening ports do not wait for each other', () => {
    expect(split([plan('r', { flag: '-R', local: 5000, remote: 6000 })], [plan('l', { local: 6001, remote: 5000 })])).toEqual({ before: [], after: ['r'] });
    expect(split([plan('r', { flag: '-R', local: 5000, remote: 6000 })], [plan('r2', { flag: '-R', local: 5001, remote: 6000 })])).toEqual({ before: ['r'], after: [] });
  });

  it('a removal on a port nobody takes does not hold up the new tunnels', () => {
    expect(split([plan('a', { local: 5000, remote: 22 }), plan('b', { local: 5001, remote: 22 })], [plan('c', { local: 5001, remote: 23 })])).toEqual({ before: ['b'], after: ['a'] });
  });
});
