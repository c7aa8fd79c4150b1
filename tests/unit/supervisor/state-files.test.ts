// The state dir's files: its modes, known_hosts, the desired states, and the children file of pids and argv.
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChildRegistry, recordedChildren, runsArgv } from '../../../src/supervisor/process/children.js';
import { DesiredStore } from '../../../src/supervisor/state/desired.js';
import { prepareStateDir, statePaths } from '../../../src/supervisor/state/state-files.js';

describe('state files', () => {
  const dir = () => join(mkdtempSync(join(tmpdir(), 'tm-sup-unit-')), 'state');

  it('creates the state dir 0700 and a known_hosts 0600, keeping an existing one', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    expect(statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(statSync(paths.knownHosts).mode & 0o777).toBe(0o600);
    writeFileSync(paths.knownHosts, 'host key\n');
    prepareStateDir(paths);
    expect(readFileSync(paths.knownHosts, 'utf8')).toBe('host key\n');
  });

  it('desired states survive a reload of the file; a damaged file means none', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const store = DesiredStore.load(paths.desired);
    expect(store.get('a')).toBeUndefined();
    store.set(['a', 'b'], 'stopped');
    store.set(['b'], 'started');
    const again = DesiredStore.load(paths.desired);
    expect([again.get('a'), again.get('b')]).toEqual(['stopped', 'started']);
    writeFileSync(paths.desired, '{ half');
    expect(DesiredStore.load(paths.desired).get('a')).toBeUndefined();
  });

  it('forgets the desired states of tunnels no longer configured', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const store = DesiredStore.load(paths.desired);
    store.set(['a', 'b'], 'stopped');
    store.forget(['a', 'unknown']);
    expect(JSON.parse(readFileSync(paths.desired, 'utf8'))).toEqual({ tunnels: { b: 'stopped' } });
    expect(DesiredStore.load(paths.desired).get('a')).toBeUndefined();
  });

  it('records child pids with their argv; a pid only counts while it runs that argv', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const reg = new ChildRegistry(paths.children);
    reg.add(123, ['ssh', '-N']);
    reg.add(456, ['ssh', '-N', '-L']);
    reg.remove(123);
    expect(recordedChildren(paths.children)).toEqual([{ pid: 456, argv: ['ssh', '-N', '-L'] }]);
    expect(runsArgv(process.pid, process.argv.slice(0, 1))).toBe(false);
    const own = readFileSync(`/proc/${process.pid}/cmdline`, 'utf8').split('\0').filter((a, i, xs) => i < xs.length - 1 || a !== '');
    expect(runsArgv(process.pid, own)).toBe(true);
    expect(runsArgv(2 ** 22 + 1, ['ssh'])).toBe(false);
  });

  it('keeps the children file a log of small appends, compacted once it holds twice the live entries, and replays it', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const reg = new ChildRegistry(paths.children);
    reg.reset();
    const argv = (pid: number) => ['ssh', '-N', '-L', `${pid}:localhost:22`];
    for (let pid = 1000; pid < 1300; pid++) reg.add(pid, argv(pid));
    // One line per start, nothing rewritten: the file grows by appends.
    expect(readFileSync(paths.children, 'utf8').trim().split('\n')).toHaveLength(300);
    for (let pid = 1000; pid < 1250; pid++) reg.remove(pid);
    const lines = readFileSync(paths.children, 'utf8').trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(Math.max(64, 2 * 50));
    const live = Array.from({ length: 50 }, (_, i) => ({ pid: 1250 + i, argv: argv(1250 + i) }));
    expect(recordedChildren(paths.children)).toEqual(live);
    // A line cut short by a crash is skipped; the earlier format (one JSON array) still reads.
    appendFileSync(paths.children, '{"pid":99');
    expect(recordedChildren(paths.children)).toEqual(live);
    writeFileSync(paths.children, `${JSON.stringify([{ pid: 7, argv: ['ssh'] }])}\n`);
    expect(recordedChildren(paths.children)).toEqual([{ pid: 7, argv: ['ssh'] }]);
  });
});
