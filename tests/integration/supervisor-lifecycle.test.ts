// Desired states across reloads and restarts, apply's diff, interactive tunnels, and
// a predecessor killed with SIGKILL whose ssh child the next supervisor ends.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor } from '../../src/supervisor/index.js';
import type { SupervisorApi } from '../../src/supervisor/index.js';
import type { StatusRecord } from '../../src/tunnel/status.js';
import { alive, isFree, port, roundTrip, sharedServers, spec, tempDir, waitFor, waitState } from './supervisor-fixture.js';

const REPO = resolve(import.meta.dirname, '../..');

const fx = sharedServers();

async function supervisor(stateDir: string): Promise<SupervisorApi> {
  const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: fx.server.sshConfigPath, stateDir, mode: 'default' });
  fx.supervisors.push(sup);
  return sup;
}

const tunnel = async (name: string, extra: Partial<Parameters<typeof spec>[0]> = {}) =>
  spec({ name, remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local', ...extra });

describe('desired state', () => {
  it('a tunnel stopped by hand stays stopped across a reload and a new supervisor, until started by hand', async () => {
    const stateDir = tempDir();
    const a = await tunnel('a');
    const b = await tunnel('b');
    const first = await supervisor(stateDir);
    await first.apply([a, b]);
    await waitState(first, a.hash, 'RUNNING');
    await first.stop(a.hash);
    // A reload with the same tunnels changes nothing.
    const report = await first.apply([a, b]);
    expect(report.unchanged.sort()).toEqual([a.hash, b.hash].sort());
    expect(first.status(a.hash)?.status).toBe('STOPPED');
    await first.shutdown();

    const second = await supervisor(stateDir);
    await second.apply([a, b]);
    await waitState(second, b.hash, 'RUNNING');
    expect(second.status(a.hash)?.status).toBe('STOPPED');
    expect(second.status(a.hash)?.pid).toBeNull();
    await second.start(a.hash);
    await waitState(second, a.hash, 'RUNNING');
    await second.shutdown();

    const third = await supervisor(stateDir);
    await third.apply([a, b]);
    await waitState(third, a.hash, 'RUNNING');
  });

  it('stopAll and startAll set every desired state; startAll leaves interactive tunnels alone', async () => {
    const stateDir = tempDir();
    const a = await tunnel('a');
    const i = await tunnel('i', { interactive: true });
    const sup = await supervisor(stateDir);
    await sup.apply([a, i]);
    await waitState(sup, a.hash, 'RUNNING');
    expect(sup.status(i.hash)?.status).toBe('STOPPED');
    const stopped = await sup.stopAll();
    expect(stopped.map((s) => s.status)).toEqual(['STOPPED', 'STOPPED']);
    await sup.shutdown();

    const next = await supervisor(stateDir);
    await next.apply([a, i]);
    expect(next.statuses().map((s) => s.status)).toEqual(['STOPPED', 'STOPPED']);
    await next.startAll();
    await waitState(next, a.hash, 'RUNNING');
    expect(next.status(i.hash)?.status).toBe('STOPPED');
    // Only an explicit start starts an interactive tunnel.
    await next.start(i.hash);
    await waitState(next, i.hash, 'RUNNING');
  });

  it('a tunnel removed from the config takes its desired state along: added back, it starts as configured', async () => {
    const stateDir = tempDir();
    const a = await tunnel('a');
    const b = await tunnel('b');
    const sup = await supervisor(stateDir);
    await sup.apply([a, b]);
    await waitState(sup, a.hash, 'RUNNING');
    await sup.stop(a.hash);
    expect(JSON.parse(readFileSync(join(stateDir, 'desired.json'), 'utf8')).tunnels[a.hash]).toBe('stopped');
    await sup.apply([b]);
    expect(JSON.parse(readFileSync(join(stateDir, 'desired.json'), 'utf8')).tunnels[a.hash]).toBeUndefined();
    await sup.apply([a, b]);
    await waitState(sup, a.hash, 'RUNNING');
  });
});

describe('restart', () => {
  it('replaces the ssh child without passing through STOPPED; the new one carries data (an ssh of its own)', async () => {
    const sup = await supervisor(tempDir());
    const a = await tunnel('a', { shared: false });
    await sup.apply([a]);
    const before = await waitState(sup, a.hash, 'RUNNING');
    const seen: string[] = [];
    sup.subscribe((e) => {
      if (e.record.hash === a.hash) seen.push(e.record.status);
    });
    await sup.restart(a.hash);
    expect(alive(before.pid as number)).toBe(false);
    const after = await waitState(sup, a.hash, 'RUNNING');
    expect(after.pid).not.toBe(before.pid);
    expect(after.restarts).toBe(1);
    expect(seen).not.toContain('STOPPED');
    expect(seen).toContain('STARTING');
    expect(await roundTrip(a.local_port.port)).toBe(true);
  });

  it('starts a tunnel stopped by hand, and remembers that it should run', async () => {
    const stateDir = tempDir();
    const a = await tunnel('a');
    const sup = await supervisor(stateDir);
    await sup.apply([a]);
    await waitState(sup, a.hash, 'RUNNING');
    await sup.stop(a.hash);
    await sup.restart(a.hash);
    await waitState(sup, a.hash, 'RUNNING');
    expect(JSON.parse(readFileSync(join(stateDir, 'desired.json'), 'utf8')).tunnels[a.hash]).toBe('started');
  });
});

describe('apply', () => {
  it('leaves unchanged tunnels alone (same pid), restarts changed ones, stops removed ones (each with an ssh of its own)', async () => {
    const sup = await supervisor(tempDir());
    const keep = await tunnel('keep', { shared: false });
    const change = await tunnel('change', { shared: false });
    const remove = await tunnel('remove', { shared: false });
    await sup.apply([keep, change, remove]);
    const before = new Map<string, StatusRecord>();
    for (const t of [keep, change, remove]) before.set(t.hash, await waitState(sup, t.hash, 'RUNNING'));

    const changed = { ...change, ssh_options: { ServerAliveInterval: '7' } };
    const added = await tunnel('added');
    const report = await sup.apply([keep, changed, added]);
    expect(report).toEqual({ added: [added.hash], removed: [remove.hash], unchanged: [keep.hash], changed: [change.hash] });

    // The removed tunnel is gone once apply resolves.
    expect(sup.status(remove.hash)).toBeUndefined();
    expect(alive(before.get(remove.hash)?.pid as number)).toBe(false);
    expect(await isFree(remove.local_port.port)).toBe(true);
    // The changed one was stopped before apply resolved and runs again with its new options.
    expect(alive(before.get(change.hash)?.pid as number)).toBe(false);
    const restarted = await waitState(sup, change.hash, 'RUNNING');
    expect(restarted.restarts).toBe(1);
    expect(restarted.pid).not.toBe(before.get(change.hash)?.pid);
    // The unchanged one kept its child.
    expect(sup.status(keep.hash)?.pid).toBe(before.get(keep.hash)?.pid);
    expect(sup.status(keep.hash)?.since).toBe(before.get(keep.hash)?.since);
    await waitState(sup, added.hash, 'RUNNING');
    expect(sup.statuses().map((s) => s.hash)).toEqual([keep.hash, change.hash, added.hash]);
    expect(await roundTrip(keep.local_port.port)).toBe(true);
  });

  it('a config change tries a FAILED tunnel again', async () => {
    const sup = await supervisor(tempDir());
    const bad = await tunnel('bad', { remote_host: 'badkey' });
    await sup.apply([bad]);
    await waitState(sup, bad.hash, 'FAILED');
    const refusedLogins = () => fx.server.log.split('\n').filter((l) => l.startsWith('Failed publickey')).length;
    const before = refusedLogins();
    const edited = { ...bad, ssh_options: { IdentitiesOnly: 'yes' } };
    const report = await sup.apply([edited]);
    expect(report.changed).toEqual([bad.hash]);
    await waitFor('a new login attempt', () => refusedLogins() > before);
    await waitState(sup, bad.hash, 'FAILED');
  });
});

describe('a predecessor killed with SIGKILL', () => {
  // A supervisor in its own process, built from the sources into a folder that
  // resolves the project's node_modules.
  let buildDir: string;
  beforeAll(async () => {
    buildDir = tempDir('tm-sup-build-');
    symlinkSync(join(REPO, 'node_modules'), join(buildDir, 'node_modules'));
    writeFileSync(join(buildDir, 'package.json'), '{"type":"module"}\n');
    mkdirSync(join(buildDir, 'out'));
    await promisify(execFile)(join(REPO, 'node_modules/.bin/tsc'), [
      '--outDir', join(buildDir, 'out'), '--rootDir', join(REPO, 'src'),
      '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022',
      '--strict', '--skipLibCheck', '--types', 'node',
      join(REPO, 'src/supervisor/index.ts'),
    ]);
    writeFileSync(join(buildDir, 'run.mjs'), [
      "import { createSupervisor } from './out/supervisor/index.js';",
      'const [stateDir, sshConfigPath, specs] = process.argv.slice(2);',
      "const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath, stateDir, mode: 'default' });",
      "sup.subscribe((e) => { if (e.record.status === 'RUNNING') console.log(JSON.stringify(e.record)); });",
      'await sup.apply(JSON.parse(specs));',
      'setInterval(() => {}, 60_000);',
      '',
    ].join('\n'));
  }, 120_000);

  it('has its ssh child ended by the next supervisor on the same state dir', async () => {
    const stateDir = tempDir();
    const t = await tunnel('orphan');
    const child = spawn(process.execPath, [join(buildDir, 'run.mjs'), stateDir, fx.server.sshConfigPath, JSON.stringify([t])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    const record = await waitFor('the child supervisor to report RUNNING', () => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      return line ? (JSON.parse(line) as StatusRecord) : undefined;
    }, 30_000);
    const sshPid = record.pid as number;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // The orphan keeps the forward open: nothing ended it.
    expect(alive(sshPid)).toBe(true);
    expect(await roundTrip(t.local_port.port)).toBe(true);

    const sup = await supervisor(stateDir);
    expect(alive(sshPid)).toBe(false);
    expect(await isFree(t.local_port.port)).toBe(true);
    // Never adopted: the new supervisor starts its own child.
    await sup.apply([t]);
    const mine = await waitState(sup, t.hash, 'RUNNING');
    expect(mine.pid).not.toBe(sshPid);
  });
});
