// One bad entry never takes the others down (SPEC §3), with the built daemon and a
// real sshd: at first start the valid entries run next to a broken one; a reload or a
// SIGHUP with a file that has problems starts the valid new entries and leaves every
// running tunnel alone (same pid), even one whose entry the file no longer has; only
// a file without problems removes tunnels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoServer, port, roundTrip, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let echo: { close(): Promise<void> };
let echoPort: number;

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
});
afterAll(async () => {
  await echo?.close();
  await server?.stop();
});

// No direction: the reference's default, remote_to_local (-L here).
const entry = (name: string, local: number | string, extra = '') =>
  `  - name: ${name}\n    remote_host: testhost\n    remote_port: ${echoPort}\n    local_port: ${local}\n${extra}`;

describe('a broken entry next to working tunnels', () => {
  let d: Daemon;
  let aPort: number;
  let bPort: number;
  let cPort: number;
  const pids: Record<string, number> = {};

  beforeAll(async () => {
    [aPort, bPort, cPort] = [await port(), await port(), await port()];
    const config = `tunnels:\n${entry('a', aPort)}${entry('broken', 70000)}${entry('b', bPort)}  - name: incomplete\n    remote_host: testhost\n`;
    d = await startDaemon({ config, sshConfigPath: server.sshConfigPath });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('at first start: the valid entries run and carry data, the broken ones are reported with line and column', async () => {
    for (const name of ['a', 'b']) pids[name] = (await d.waitState(name, 'RUNNING')).pid;
    expect(await roundTrip(aPort, 'a')).toBe('a');
    expect(await roundTrip(bPort, 'b')).toBe('b');
    expect((await d.json<any[]>('/status')).map((t) => t.name).sort()).toEqual(['a', 'b']);
    const health = await d.json('/health/details');
    expect(health.config).toMatchObject({ valid: false, applied: 'partial' });
    expect(health.config.rejected.map((r: any) => [r.index, r.line, r.column])).toEqual([
      [1, 6, 5],
      [3, 14, 5],
    ]);
    expect(health.config.rejected[0].problems[0]).toMatch(/^line 9, column 17: tunnels\[1\]\.local_port: expected a port/);
  });

  it('a reload with problems starts the valid new entry and changes nothing that runs, even a tunnel the file dropped', async () => {
    // a is gone from the file, b stays, c is new, and one entry is still broken.
    d.writeConfig(`tunnels:\n${entry('b', bPort)}${entry('c', cPort)}${entry('broken', 'not-a-port')}`);
    const c = await d.waitState('c', 'RUNNING');
    expect(await roundTrip(cPort, 'c')).toBe('c');
    const status = await d.json<any[]>('/status');
    expect(status.find((t) => t.name === 'a')).toMatchObject({ status: 'RUNNING', pid: pids.a });
    expect(status.find((t) => t.name === 'b')).toMatchObject({ status: 'RUNNING', pid: pids.b });
    expect(await roundTrip(aPort, 'a still')).toBe('a still');
    pids.c = c.pid;
    const health = await d.json('/health/details');
    expect(health.config.rejected.map((r: any) => r.index)).toEqual([2]);
  });

  it('SIGHUP with the same file changes nothing either', async () => {
    const reloads = () => (d.stderr().match(/"event":"reload"/g) ?? []).length;
    const before = reloads();
    d.child.kill('SIGHUP');
    await d.waitFor('the SIGHUP reload logged', async () => reloads() > before || undefined);
    expect((await d.json('/health/details')).config).toMatchObject({ applied: 'partial' });
    const status = await d.json<any[]>('/status');
    for (const name of ['a', 'b', 'c']) expect(status.find((t) => t.name === name)).toMatchObject({ status: 'RUNNING', pid: pids[name] });
  });

  it('a file that is not YAML changes nothing', async () => {
    d.writeConfig(`tunnels:\n${entry('b', bPort)}  - name: [unclosed\n`);
    await d.waitFor('the file refused', async () => (await d.json('/health/details')).config.applied === 'none' || undefined);
    const status = await d.json<any[]>('/status');
    for (const name of ['a', 'b', 'c']) expect(status.find((t) => t.name === name)).toMatchObject({ status: 'RUNNING', pid: pids[name] });
  });

  it('only a file without problems removes tunnels; the ones it keeps keep their pids', async () => {
    d.writeConfig(`tunnels:\n${entry('b', bPort)}${entry('c', cPort)}`);
    await d.waitFor('a removed', async () => !(await d.json<any[]>('/status')).some((t) => t.name === 'a') || undefined);
    const status = await d.json<any[]>('/status');
    expect(status.map((t) => [t.name, t.pid])).toEqual([
      ['b', pids.b],
      ['c', pids.c],
    ]);
    expect((await d.json('/health/details')).config).toMatchObject({ valid: true, applied: 'all', rejected: [] });
  });
});
