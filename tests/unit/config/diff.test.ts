import { describe, expect, test } from 'vitest';
import { diffTunnels } from '../../../src/config/diff.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';
import { valid } from './helpers.js';

/** Real specs, as the loader makes them. */
function specs(entries: string[], fileOptions = ''): TunnelSpec[] {
  return valid(`${fileOptions}tunnels:\n${entries.map((e) => `  - ${e}\n`).join('')}`).config.tunnels;
}
const A = '{ name: a, remote_host: h, remote_port: 1, local_port: 11, direction: remote_to_local }';
const B = '{ name: b, remote_host: h, remote_port: 2, local_port: 12, direction: remote_to_local }';
const C = '{ name: c, remote_host: h, remote_port: 3, local_port: 13, direction: remote_to_local }';
const names = (ts: readonly TunnelSpec[]) => ts.map((t) => t.name);

describe('diffTunnels', () => {
  test('nothing before: everything is added', () => {
    const next = specs([A, B]);
    expect(diffTunnels([], next)).toEqual({ added: next, removed: [], unchanged: [], changed: [] });
  });

  test('nothing after: everything is removed', () => {
    const current = specs([A, B]);
    expect(diffTunnels(current, [])).toEqual({ added: [], removed: current, unchanged: [], changed: [] });
  });

  test('added, removed and unchanged by hash, each in its config\'s order', () => {
    const d = diffTunnels(specs([A, B, C]), specs([C, '{ name: d, remote_host: h, remote_port: 4, local_port: 14, direction: remote_to_local }', A]));
    expect(names(d.added)).toEqual(['d']);
    expect(names(d.removed)).toEqual(['b']);
    expect(names(d.unchanged)).toEqual(['c', 'a']);
    expect(d.changed).toEqual([]);
  });

  test('a field of the hash changed: the old tunnel is removed and the new one added', () => {
    const d = diffTunnels(specs([A]), specs([A.replace('local_port: 11', 'local_port: 21')]));
    expect(names(d.removed)).toEqual(['a']);
    expect(names(d.added)).toEqual(['a']);
  });

  test('unknown keys, comments and position do not count as a change; the new spec is returned', () => {
    const current = specs([A]);
    const next = valid(`# moved down\n\ntunnels:\n  - ${A.replace('}', ', note: hello }')}\n`).config.tunnels;
    const d = diffTunnels(current, next);
    expect(d.unchanged).toEqual(next);
    expect(d.unchanged[0]!.line).toBe(4);
  });

  test('same hash, different effective ssh_options: changed (restart), with both specs', () => {
    const current = specs([A, B]);
    const next = specs([A.replace('}', ', ssh_options: { ServerAliveInterval: 30 } }'), B]);
    const d = diffTunnels(current, next);
    expect(d.changed).toEqual([{ before: current[0], after: next[0] }]);
    expect(names(d.unchanged)).toEqual(['b']);
    expect(d.added).toEqual([]);
    expect(d.removed).toEqual([]);
  });

  test('a change of the file-wide ssh_options changes every tunnel it reaches', () => {
    const current = specs([A, B]);
    const next = specs([A, B.replace('}', ', ssh_options: { Compression: yes } }')], 'ssh_options: { Compression: yes }\n');
    const d = diffTunnels(current, next);
    expect(d.changed.map((c) => c.after.name)).toEqual(['a', 'b']);
  });

  test('the same options written differently are no change', () => {
    const current = specs([A.replace('}', ', ssh_options: { Compression: yes, ConnectTimeout: 5 } }')]);
    const next = specs([A.replace('}', ', ssh_options: { connecttimeout: "5", compression: true } }')]);
    expect(names(diffTunnels(current, next).unchanged)).toEqual(['a']);
  });

  test('an option removed is a change', () => {
    const current = specs([A.replace('}', ', ssh_options: { Compression: yes } }')]);
    expect(diffTunnels(current, specs([A])).changed).toHaveLength(1);
  });
});
