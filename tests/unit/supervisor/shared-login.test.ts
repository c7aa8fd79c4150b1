// Interactive tunnels on one shared connection (SPEC §13, §14) with a scripted master in
// a fake terminal, a fake `ssh -O` and virtual time: one login slot for the group,
// taken through any of its tunnels, one prompt, and every tunnel up once it is done.
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/supervisor/backoff.js';
import { ConnectionPool } from '../../../src/supervisor/connection/connection-pool.js';
import type { ControlForward, ControlOutcome } from '../../../src/supervisor/connection/control-command.js';
import { FRESH_PROMPT_MS } from '../../../src/supervisor/effects/retry-wait.js';
import { ProcessSweep } from '../../../src/supervisor/process/process-sweep.js';
import { Runner, type RunnerDeps, type TunnelPlan } from '../../../src/supervisor/tunnel/tunnel-runner.js';
import { SpawnSpacer } from '../../../src/supervisor/spacing.js';
import type { LoginOutcome, TerminalSink } from '../../../src/supervisor/types.js';
import { parseEndpoint } from '../../../src/tunnel/endpoint.js';
import type { StatusRecord } from '../../../src/tunnel/status.js';
import { ESTABLISHED_L, fakeSpawn, flush, ManualClock } from './fakes.js';

const endpoint = (s: string) => {
  const r = parseEndpoint(s);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

const CONNECTION = { id: 'c0ffee0123456789', file: 'ssh', args: ['-N', '-E', '/tmp/x.log', '--', 'bastion'], controlPath: '/tmp/mux/c0ffee0123456789', spacingKey: 'bastion', sshEndpoint: null, interactive: true };

function interactivePlan(name: string, port: number): TunnelPlan {
  const value = `127.0.0.1:${port}:localhost:5432`;
  return {
    spec: {
      hash: `${name}-hash`,
      name,
      remote_host: 'bastion',
      remote_port: endpoint('5432'),
      local_port: endpoint(String(port)),
      direction: 'remote_to_local',
      interactive: true,
      ssh_options: {},
      written: {},
      line: 1,
    },
    file: 'ssh',
    args: ['-N', '-L', value, '--', 'bastion'],
    flag: '-L',
    remoteBind: null,
    sshEndpoint: null,
    localBind: { host: '127.0.0.1', port },
    spacingKey: 'bastion',
    startTimeoutMs: 15_000,
    checkTarget: null,
    shared: { connection: CONNECTION, forward: { flag: '-L', value }, port },
  };
}

function harness() {
  const clock = new ManualClock();
  const batch = fakeSpawn(clock);
  const pty = fakeSpawn(clock);
  const records: StatusRecord[] = [];
  const runs: { op: string; values: string[] }[] = [];
  const control = async (_bin: string, _path: string, op: 'forward' | 'cancel', forwards: readonly ControlForward[]): Promise<ControlOutcome> => {
    runs.push({ op, values: forwards.map((f) => f.value) });
    await Promise.resolve();
    return { code: 0, lines: [], timedOut: false };
  };
  const spacer = new SpawnSpacer(clock, 100);
  const deps: RunnerDeps = {
    clock,
    spawn: batch.spawn,
    spawnPty: pty.spawn,
    probe: async () => false,
    spacer,
    processes: new ProcessSweep(clock),
    registry: { add: () => {}, remove: () => {} },
    connections: new ConnectionPool({
      clock,
      spawn: batch.spawn,
      spawnPty: pty.spawn,
      control,
      probe: async () => false,
      spacer,
      registry: { add: () => {}, remove: () => {} },
      rules: { policy: DEFAULT_BACKOFF, unprobedCapMs: 4_000, probeIntervalMs: 250, startTimeoutMs: 15_000 },
      graceMs: 3_000,
      processState: () => 'S',
      log: () => {},
    }),
    policy: DEFAULT_BACKOFF,
    unprobedCapMs: 4_000,
    probeIntervalMs: 250,
    graceMs: 3_000,
    logLines: 200,
    onChange: (r) => records.push(r),
    log: () => {},
  };
  const alpha = new Runner(interactivePlan('alpha', 15001), deps);
  const beta = new Runner(interactivePlan('beta', 15002), deps);
  return { clock, batch: batch.children, masters: pty.children, runs, alpha, beta };
}

function sink() {
  const out: string[] = [];
  const ends: LoginOutcome[] = [];
  return { out, ends, sink: { output: (t: string) => out.push(t), end: (o: LoginOutcome) => ends.push(o) } satisfies TerminalSink };
}

describe('interactive tunnels sharing one login', () => {
  it('wait together for one prompt, taken through either; once logged in, both forwards are added and both RUNNING', async () => {
    const { clock, batch, masters, runs, alpha, beta } = harness();
    alpha.start({ restart: false });
    beta.start({ restart: false });
    await clock.advance(0);
    expect(batch).toHaveLength(0);
    expect(masters).toHaveLength(1);
    const master = masters[0]!;
    for (const r of [alpha, beta]) expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', pid: null, connection: { id: CONNECTION.id, pid: master.pid, state: 'awaiting_login' } });

    master.terminal.show('Verification code: ');
    const s = sink();
    const a = beta.attach(s.sink);
    if (!a.ok) throw new Error(a.error.message);
    expect(s.out).toEqual(['Verification code: ']);
    expect(alpha.attach(sink().sink)).toMatchObject({ ok: false, error: { reason: 'busy', message: expect.stringMatching(/the login alpha shares with the other interactive tunnels to bastion/) } });
    a.value.input('123456\r');
    expect(master.terminal.typed).toEqual(['123456\r']);
    // No start timeout on a person's login.
    await clock.advance(600_000);
    expect(master.signals).toEqual([]);

    master.say(ESTABLISHED_L);
    await flush();
    expect(runs.filter((r) => r.op === 'forward').flatMap((r) => r.values).sort()).toEqual(['127.0.0.1:15001:localhost:5432', '127.0.0.1:15002:localhost:5432']);
    for (const r of [alpha, beta]) expect(r.status()).toMatchObject({ status: 'RUNNING', pid: master.pid, connection: { state: 'up' } });
    expect(s.ends).toEqual([{ status: 'RUNNING', message: null }]);
    expect(masters).toHaveLength(1);
  });

  it('the login lost: both leave RUNNING with the cause and wait for one fresh login together', async () => {
    const { clock, masters, alpha, beta } = harness();
    alpha.start({ restart: false });
    beta.start({ restart: false });
    await clock.advance(0);
    masters[0]!.say(ESTABLISHED_L);
    await flush();
    masters[0]!.say('Connection to bastion closed by remote host.');
    masters[0]!.exit(255);
    await clock.advance(0);
    expect(masters).toHaveLength(2);
    for (const r of [alpha, beta]) expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', pid: null, last_error: expect.stringMatching(/closed/), connection: { pid: masters[1]!.pid, state: 'awaiting_login' } });
    // That fresh login ends with no one at it: no other by itself, both rest in AUTH_REQUIRED.
    masters[1]!.say('ssh: connect to host bastion port 22: Connection refused');
    masters[1]!.exit(255);
    await clock.advance(600_000);
    expect(masters).toHaveLength(2);
    for (const r of [alpha, beta]) expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', connection: { pid: null, state: 'down' } });
    // A person asks through alpha: one login, and beta (not asking) shows that it waits for it too.
    expect(alpha.attach(sink().sink).ok).toBe(true);
    await clock.advance(0);
    expect(masters).toHaveLength(3);
    expect(beta.status()).toMatchObject({ status: 'AUTH_REQUIRED', connection: { pid: masters[2]!.pid, state: 'awaiting_login' } });
  });

  it('a restart by hand of a tunnel resting in AUTH_REQUIRED asks for a fresh shared login', async () => {
    const { clock, masters, alpha } = harness();
    alpha.start({ restart: false });
    await clock.advance(0);
    masters[0]!.say('ssh: connect to host bastion port 22: Connection refused');
    masters[0]!.exit(255);
    await clock.advance(0);
    expect(alpha.status()).toMatchObject({ status: 'AUTH_REQUIRED', connection: { state: 'down' } });
    void alpha.restart();
    await clock.advance(0);
    expect(masters).toHaveLength(2);
    expect(alpha.status()).toMatchObject({ status: 'AUTH_REQUIRED', connection: { pid: masters[1]!.pid, state: 'awaiting_login' } });
  });

  it('a person at a prompt older than a minute gets a fresh login, staying attached, and the tunnels keep waiting on it', async () => {
    const { clock, masters, alpha, beta } = harness();
    alpha.start({ restart: false });
    await clock.advance(0);
    const old = masters[0]!;
    await clock.advance(FRESH_PROMPT_MS);
    const s = sink();
    // Through beta, stopped until now: attaching starts it on the same login.
    expect(beta.attach(s.sink).ok).toBe(true);
    await clock.advance(0);
    expect(old.signals).toContain('SIGTERM');
    expect(masters).toHaveLength(2);
    masters[1]!.terminal.show('Verification code: ');
    expect(s.out).toEqual(['Verification code: ']);
    expect(s.ends).toEqual([]);
    for (const r of [alpha, beta]) expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', connection: { pid: masters[1]!.pid } });
    masters[1]!.say(ESTABLISHED_L);
    await flush();
    for (const r of [alpha, beta]) expect(r.status().status).toBe('RUNNING');
    expect(s.ends).toEqual([{ status: 'RUNNING', message: null }]);
  });

  it('stopping every tunnel ends the login waiting at its prompt; a stop of the one attached through ends its session', async () => {
    const { clock, masters, alpha, beta } = harness();
    alpha.start({ restart: false });
    const s = sink();
    beta.attach(s.sink);
    await clock.advance(0);
    await beta.stop();
    expect(s.ends).toEqual([{ status: 'STOPPED', message: 'the tunnel was stopped' }]);
    expect(masters[0]!.gone).toBe(false);
    const stopped = alpha.stop();
    await clock.advance(0);
    await stopped;
    expect(masters[0]!.gone).toBe(true);
    expect(alpha.status()).toMatchObject({ status: 'STOPPED', connection: { pid: null, state: 'down' } });
  });
});
