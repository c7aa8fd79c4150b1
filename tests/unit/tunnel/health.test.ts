// Health rules (SPEC §5) fed with the lines OpenSSH 9.2 printed in these cases, and
// the causes a retry cannot fix (SPEC §4).
import { describe, expect, it } from 'vitest';
import { classifyExit, forwardingRefusedLine } from '../../../src/supervisor/process/ssh-exit-classify.js';
import { CHANNEL_CONFIRM_MS, initialHealth, observeHealth, type HealthModel, type HealthObservation } from '../../../src/tunnel/health.js';

/** Feeds observations at the given times; returns the model after each. */
function run(steps: [number, HealthObservation][], start: HealthModel = initialHealth(0)): HealthModel[] {
  const out: HealthModel[] = [];
  let m = start;
  for (const [at, o] of steps) {
    m = observeHealth(m, o, at);
    out.push(m);
  }
  return out;
}
const line = (l: string): HealthObservation => ({ kind: 'line', line: l });
const L: HealthObservation = { kind: 'established', flag: '-L', remoteBind: null };

describe('health', () => {
  it('is unknown until the forward is established, then ok', () => {
    const [before, after] = run([[5, line('debug1: channel 1: new direct-tcpip [direct-tcpip]')], [10, L]]);
    expect(before!.health).toEqual({ state: 'unknown', reason: 'the forward is not established', since: 0 });
    expect(after!.health).toEqual({ state: 'ok', reason: null, since: 10 });
  });

  it('-L to a closed target: degraded with ssh\'s own words; a later channel that does not fail clears it', () => {
    const ms = run([
      [0, L],
      [100, line('debug1: channel 1: new direct-tcpip [direct-tcpip] (inactive timeout: 0)')],
      [101, line('channel 1: open failed: connect failed: Connection refused')],
      [102, line('debug1: channel 1: free: direct-tcpip: listening port 15480 for 127.0.0.1 port 16390, connect from 127.0.0.1 port 55486 to 127.0.0.1 port 15480, nchannels 2')],
      [5000, line('debug1: channel 1: new direct-tcpip [direct-tcpip] (inactive timeout: 0)')],
      [5200, line('debug1: channel 1: free: direct-tcpip: listening port 15480 for 127.0.0.1 port 14296, connect from 127.0.0.1 port 60720 to 127.0.0.1 port 15480, nchannels 2')],
    ]);
    expect(ms[2]!.health).toEqual({ state: 'degraded', reason: 'connections through the forward fail: ssh reports "connect failed: Connection refused"', since: 101 });
    expect(ms[3]!.health.state).toBe('degraded');
    expect(ms[5]!.health).toEqual({ state: 'ok', reason: null, since: 5200 });
  });

  it('a channel still open after the confirm time counts as accepted (a long-lived connection)', () => {
    const ms = run([
      [0, L],
      [1, line('channel 2: open failed: connect failed: Connection refused')],
      [10, line('debug1: channel 3: new direct-tcpip [direct-tcpip]')],
      [10 + CHANNEL_CONFIRM_MS - 1, { kind: 'tick' }],
      [10 + CHANNEL_CONFIRM_MS, { kind: 'tick' }],
    ]);
    expect(ms[3]!.health.state).toBe('degraded');
    expect(ms[4]!.health.state).toBe('ok');
  });

  it('-R to a closed local target: degraded; a connected channel clears it', () => {
    const ms = run([
      [0, { kind: 'established', flag: '-R', remoteBind: '127.0.0.1' }],
      [1, line('debug1: channel 0: new forwarded-tcpip [127.0.0.1] (inactive timeout: 0)')],
      [2, line('debug1: channel 0: connection failed: Connection refused')],
      [3, line('connect_to localhost port 16390: failed.')],
      [9, line('debug1: channel 0: new forwarded-tcpip [127.0.0.1] (inactive timeout: 0)')],
      [10, line('debug1: channel 0: connected to 127.0.0.1 port 14296')],
    ]);
    expect(ms[2]!.health).toMatchObject({ state: 'degraded', reason: expect.stringContaining('local target refuses them ("Connection refused")') });
    expect(ms[5]!.health.state).toBe('ok');
  });

  it('-R on a non-loopback bind is unknown and names GatewayPorts until a check passes', () => {
    const ms = run([
      [0, { kind: 'established', flag: '-R', remoteBind: '0.0.0.0' }],
      [5, { kind: 'check', ok: true, detail: '' }],
    ]);
    expect(ms[0]!.health).toMatchObject({ state: 'unknown', reason: expect.stringContaining('GatewayPorts clientspecified') });
    expect(ms[1]!.health.state).toBe('ok');
    expect(run([[0, { kind: 'established', flag: '-R', remoteBind: '127.0.0.1' }]])[0]!.health.state).toBe('ok');
  });

  it('a stopped process is degraded whatever else is seen, and recovers when it runs again', () => {
    const ms = run([
      [0, L],
      [1, { kind: 'process', stopped: true }],
      [2, { kind: 'check', ok: true, detail: '' }],
      [3, { kind: 'process', stopped: false }],
    ]);
    expect(ms[1]!.health).toMatchObject({ state: 'degraded', reason: expect.stringContaining('stopped (state T') });
    expect(ms[2]!.health.state).toBe('degraded');
    expect(ms[3]!.health).toEqual({ state: 'ok', reason: null, since: 3 });
  });

  it('a failed check degrades with its detail; a pass clears it; since moves only on change', () => {
    const ms = run([
      [0, L],
      [10, { kind: 'check', ok: false, detail: 'no answer to GET / within 5 s' }],
      [20, { kind: 'check', ok: false, detail: 'no answer to GET / within 5 s' }],
      [30, { kind: 'check', ok: true, detail: '' }],
    ]);
    expect(ms[1]!.health).toEqual({ state: 'degraded', reason: 'health check failed: no answer to GET / within 5 s', since: 10 });
    expect(ms[2]!.health.since).toBe(10);
    expect(ms[3]!.health).toEqual({ state: 'ok', reason: null, since: 30 });
  });

  it('leaving RUNNING forgets every cause', () => {
    const ms = run([
      [0, L],
      [1, line('channel 1: open failed: connect failed: Connection refused')],
      [2, { kind: 'down' }],
      [3, L],
    ]);
    expect(ms[2]!.health.state).toBe('unknown');
    expect(ms[3]!.health.state).toBe('ok');
  });
});

describe('forwarding refused by the server (FAILED, SPEC §4)', () => {
  const R_REFUSED = [
    'Authenticated to 127.0.0.1 ([127.0.0.1]:31474) using "publickey".',
    'debug1: Remote connections from 127.0.0.1:14035 forwarded to local address localhost:22',
    'debug1: Entering interactive session.',
    'debug1: Remote: Server has disabled port forwarding.',
    'debug1: remote forward failure for: listen 127.0.0.1:14035, connect localhost:22',
    'Error: remote port forwarding failed for listen port 14035',
  ];

  it('-R: sshd\'s "Server has disabled port forwarding" makes it FAILED, not a taken port', () => {
    const f = classifyExit({ code: 255, signal: null, lines: R_REFUSED, flag: '-R', remoteBind: '127.0.0.1' });
    expect(f).toMatchObject({ reason: 'forwarding_refused', retry: false, probe: null });
    expect(f.message).toBe('the server refuses port forwarding (AllowTcpForwarding, PermitOpen or a no-port-forwarding key option): Server has disabled port forwarding.');
  });

  it('-R without that message stays a taken port (RETRYING)', () => {
    const taken = R_REFUSED.filter((l) => !l.includes('Server has disabled'));
    expect(classifyExit({ code: 255, signal: null, lines: taken, flag: '-R', remoteBind: '127.0.0.1' })).toMatchObject({ reason: 'remote_forward_failed', retry: true });
  });

  it('-L: an "administratively prohibited" channel is the same cause', () => {
    expect(forwardingRefusedLine('channel 1: open failed: administratively prohibited: open failed')).toMatchObject({ reason: 'forwarding_refused', retry: false });
    expect(forwardingRefusedLine('channel 1: open failed: connect failed: Connection refused')).toBeNull();
  });
});
