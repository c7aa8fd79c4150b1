// Where a shared connection's control sockets go: a stable id per option set, a path ssh
// can bind, in a folder that is private and ours.
import { mkdtempSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTROL_PATH_MAX, connectionId, controlPath, prepareControlDir } from '../../../src/supervisor/connection/control-path.js';

describe('control socket paths', () => {
  it('ids are stable for one option set and differ for another', () => {
    expect(connectionId(['ssh', '-N', '--', 'h'])).toBe(connectionId(['ssh', '-N', '--', 'h']));
    expect(connectionId(['ssh', '-N', '--', 'h'])).not.toBe(connectionId(['ssh', '-N', '-o', 'Compression=yes', '--', 'h']));
    expect(connectionId(['ssh'])).toMatch(/^[0-9a-f]{16}$/);
  });

  it('under the state dir when short enough, with leftovers removed; elsewhere (private, ours) when the state dir is too long', () => {
    const short = mkdtempSync(join(tmpdir(), 'tm-cp-'));
    mkdirSync(join(short, 'mux'));
    writeFileSync(join(short, 'mux', 'deadbeefdeadbeef'), '');
    const dir = prepareControlDir(short);
    expect(dir).toEqual({ ok: true, value: join(short, 'mux') });
    expect(readdirSync(join(short, 'mux'))).toEqual([]);
    const long = join(short, 'x'.repeat(80));
    mkdirSync(long);
    const other = prepareControlDir(long);
    expect(other.ok).toBe(true);
    if (other.ok) {
      expect(other.value.startsWith(long)).toBe(false);
      expect(controlPath(other.value, connectionId(['x'])).length).toBeLessThanOrEqual(CONTROL_PATH_MAX);
    }
  });
});

it('a control socket folder that is ours but open to others is made private (0700)', async () => {
  const { statSync } = await import('node:fs');
  const state = mkdtempSync(join(tmpdir(), 'tm-cp-'));
  mkdirSync(join(state, 'mux'), { mode: 0o755 });
  const dir = prepareControlDir(state);
  expect(dir).toEqual({ ok: true, value: join(state, 'mux') });
  expect(statSync(join(state, 'mux')).mode & 0o777).toBe(0o700);
});
