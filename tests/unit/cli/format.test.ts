import { describe, expect, it } from 'vitest';
import type { ReferenceTunnel } from '../../../src/api/types.js';
import { directionWords, formatConfigProblem, formatDuration, formatList, formatProgress, formatRecordLine, formatReload, formatStatus, table, useColor, writtenDirection } from '../../../src/cli/format.js';
import { formatLogsList, formatTunnel, formatValidation } from '../../../src/cli/inspect.js';
import { DEFAULT_DIRECTION } from '../../../src/config/identity.js';
import type { StatusRecord } from '../../../src/tunnel/status.js';

const now = new Date('2024-05-01T12:00:00.000Z');
const plain = { color: false, now };

const rec = (over: Partial<StatusRecord>): StatusRecord => ({
  hash: '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d',
  name: 'db',
  remote_host: 'user@bastion',
  remote_port: '5432',
  local_port: '127.0.0.1:15432',
  direction: 'remote_to_local',
  status: 'STOPPED',
  pid: null,
  since: '2024-05-01T11:56:55.000Z',
  restarts: 0,
  last_exit: null,
  last_error: null,
  connection: null,
  next_retry_at: null,
  health: { state: 'ok', reason: null, since: '2024-05-01T11:56:55.000Z' },
  ...over,
});

describe('formatDuration', () => {
  it('uses the two largest units', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(42_900)).toBe('42s');
    expect(formatDuration(185_000)).toBe('3m05s');
    expect(formatDuration(2 * 3600_000 + 7 * 60_000 + 5000)).toBe('2h07m');
    expect(formatDuration(4 * 86400_000 + 3 * 3600_000)).toBe('4d03h');
    expect(formatDuration(-5000)).toBe('0s');
  });
});

describe('table', () => {
  it('pads columns to the widest cell, ignoring colour codes, without trailing blanks', () => {
    const out = table(['A', 'BB'], [['x', '1'], ['\x1b[32mlonger\x1b[0m', '']]);
    expect(out).toBe('A       BB\nx       1\n\x1b[32mlonger\x1b[0m\n');
  });
});

describe('formatStatus', () => {
  it('shows name, short hash, direction in words, state, uptime when RUNNING, restarts and last error', () => {
    const out = formatStatus(
      [
        rec({ status: 'RUNNING', pid: 77, restarts: 2 }),
        rec({ name: 'web', hash: 'ffffeeee00001111222233334444aaaa', direction: 'local_to_remote', status: 'RETRYING', last_error: 'connection refused', next_retry_at: '2024-05-01T12:00:03.000Z', restarts: 5 }),
        rec({ name: 'auth', hash: 'abcdabcd00001111222233334444aaaa', status: 'FAILED', last_error: 'authentication failed:\nPermission denied (publickey)' }),
      ],
      plain,
    );
    expect(out).toBe(
      [
        'NAME  HASH      DIRECTION        STATE     UPTIME       RESTARTS  LAST ERROR                                            HEALTH',
        'db    1a2b3c4d  remote to local  RUNNING   up 3m05s     2         -                                                     ok',
        'web   ffffeeee  local to remote  RETRYING  retry in 3s  5         connection refused                                    -',
        'auth  abcdabcd  remote to local  FAILED    -            0         authentication failed: Permission denied (publickey)  -',
        '',
      ].join('\n'),
    );
  });

  it('shows a RUNNING tunnel that carries nothing as degraded, with why', () => {
    const reason = 'connections through the forward fail: ssh reports "connect failed: Connection refused"';
    const r = rec({ status: 'RUNNING', health: { state: 'degraded', reason, since: '2024-05-01T12:00:00.000Z' } });
    expect(formatStatus([r], plain).split('\n')[1]).toMatch(new RegExp(`RUNNING .* degraded: ${reason.replace(/[()]/g, '\\$&')}$`));
    expect(formatRecordLine(r, plain)).toContain(`health degraded: ${reason}`);
    expect(formatStatus([r], { color: true, now })).toContain('\x1b[31mdegraded\x1b[0m');
  });

  it('colours the state only when asked', () => {
    expect(formatStatus([rec({ status: 'RUNNING' })], { color: true, now })).toContain('\x1b[32mRUNNING\x1b[0m');
    expect(formatStatus([rec({ status: 'FAILED' })], { color: true, now })).toContain('\x1b[31mFAILED\x1b[0m');
    expect(formatStatus([rec({ status: 'FAILED' })], plain)).not.toContain('\x1b[');
  });

  it('says when there is nothing', () => {
    expect(formatStatus([], plain)).toBe('no tunnels configured\n');
    expect(formatList([])).toBe('no tunnels configured\n');
  });
});

describe('formatList', () => {
  it('shows the entries as written', () => {
    const out = formatList([{ name: 'db', hash: '1a2b3c4d5e6f', remote_host: 'user@bastion', remote_port: 5432, local_port: '127.0.0.1:15432', direction: 'remote_to_local', status: 'RUNNING' }]);
    expect(out).toBe('NAME  HASH      DIRECTION        REMOTE HOST   REMOTE  LOCAL\ndb    1a2b3c4d  remote to local  user@bastion  5432    127.0.0.1:15432\n');
  });

  it('an entry without direction is remote to local, as the daemon runs it (SPEC §3)', () => {
    const entry = { name: 'db', hash: '1a2b3c4d5e6f', remote_host: 'bastion', remote_port: 5432, local_port: 15432, status: 'RUNNING' as const };
    for (const direction of [undefined, null, '']) {
      const row = formatList([{ ...entry, direction }]).split('\n')[1];
      expect(row, String(direction)).toBe('db    1a2b3c4d  remote to local  bastion      5432    15432');
    }
    expect(formatList([entry]).split('\n')[1]).toBe('db    1a2b3c4d  remote to local  bastion      5432    15432');
    // The default the CLI shows is the one the config reader applies.
    expect(writtenDirection(undefined)).toBe(directionWords(DEFAULT_DIRECTION));
  });

  it('a SOCKS tunnel has no remote port: -', () => {
    const socks = { name: 'proxy', hash: 'ffffeeee0000', remote_host: 'bastion', local_port: 1080, direction: 'socks', status: 'RUNNING' as const };
    for (const remote_port of [undefined, null, '']) {
      expect(formatList([{ ...socks, remote_port }]).split('\n')[1], String(remote_port)).toBe('proxy  ffffeeee  SOCKS proxy  bastion      -       1080');
    }
  });

  it('never undefined, null or [object Object], whatever an entry lacks or holds', () => {
    const bare = formatList([{ name: 'n', hash: 'abcdabcd', status: 'STOPPED' }]);
    expect(bare.split('\n')[1]).toBe('n     abcdabcd  remote to local  -            -       -');
    const odd = formatList([{ name: 'n', hash: 'abcdabcd', status: 'STOPPED', remote_host: { alias: 'x' }, remote_port: [1, 2], local_port: true, direction: 7 }]);
    expect(odd).not.toMatch(/undefined|null|\[object Object\]/);
    expect(odd).toContain('{"alias":"x"}');
    expect(odd).toContain('[1,2]');
  });
});

describe('every other format, with every field that may be absent absent', () => {
  const none = /undefined|null|\[object Object\]|NaN/;
  const bare = rec({ status: 'RETRYING', since: 'not a time', next_retry_at: null, last_error: null, last_exit: null, pid: null, connection: null, health: { state: 'unknown', reason: null, since: '' } });

  it('status, one-tunnel lines and progress', () => {
    for (const status of ['STOPPED', 'STARTING', 'RUNNING', 'RETRYING', 'FAILED', 'AUTH_REQUIRED'] as const) {
      const r = { ...bare, status };
      expect(formatStatus([r], plain), status).not.toMatch(none);
      expect(formatRecordLine(r, plain), status).not.toMatch(none);
      expect(formatProgress([r], 0, plain), status).not.toMatch(none);
    }
    expect(formatStatus([{ ...bare, status: 'RUNNING' }], plain).split('\n')[1]).toBe('db    1a2b3c4d  remote to local  RUNNING  -       0         -           unknown');
    expect(formatStatus([{ ...bare, direction: 'socks' }], plain)).toContain('SOCKS proxy');
  });

  it('reload: a tunnel restarted with changed ssh options is counted; no blank problem line when the daemon sent none', () => {
    const base = { type: 'reload' as const, at: '', ok: true, error: null, added: [], removed: [], unchanged: ['a'], changed: [], left_out: 0 };
    expect(formatReload({ ...base, changed: ['b'] })).toBe('reloaded: 0 added, 0 removed, 1 unchanged, 1 restarted with changed settings\n');
    expect(formatReload({ ...base, left_out: 2 })).toBe('reloaded: 0 added, 0 removed, 1 unchanged; 2 left out (nothing running was stopped or changed)\n');
  });

  it('logs without a hash: a tunnel whose last line has no time', () => {
    const out = formatLogsList([{ hash: 'abcdabcd1111', name: 'db', lines: 3, modified: null }]);
    expect(out.split('\n')[1]).toBe('db    abcdabcd  3      -');
  });
});

describe('show-tunnel', () => {
  const t: ReferenceTunnel = { name: 'db', hash: '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local', interactive: false };
  const rows = (text: string) => Object.fromEntries(text.trimEnd().split('\n').map((l) => [l.split(/ +/)[0], l.replace(/^\S+ +/, '')]));

  it('the entry and its state', () => {
    expect(rows(formatTunnel(t, rec({ status: 'RUNNING', pid: 7 })))).toMatchObject({ remote_port: '5432', direction: 'remote_to_local', status: 'RUNNING', pid: '7', since: '2024-05-01T11:56:55.000Z' });
    expect(rows(formatTunnel(t, null)).status).toMatch(/^not in the config in force/);
  });

  it('a SOCKS tunnel\'s remote_port, and the fields an entry with problems lacks: -', () => {
    const r = rows(formatTunnel({ ...t, remote_port: '', direction: 'socks' }, rec({ direction: 'socks', remote_port: '' })));
    expect(r.remote_port).toBe('-');
    expect(r.direction).toBe('socks');
    const broken = formatTunnel({ ...t, remote_host: '', remote_port: '', local_port: '' }, null);
    expect(rows(broken)).toMatchObject({ remote_host: '-', remote_port: '-', local_port: '-' });
    expect(broken).not.toMatch(/undefined|null|\[object Object\]/);
  });

  it('a direction the file writes leniently says how it runs', () => {
    expect(rows(formatTunnel({ ...t, direction: '~' }, rec({ status: 'RUNNING' }))).direction).toBe('~ (runs as remote_to_local)');
  });
});

describe('validate', () => {
  const config = { valid: false, error: 'line 6, column 18: b', missing: false, applied: 'none' as const, rejected: [] };
  it('a file that changed nothing, one whose valid entries run, and one without details', () => {
    expect(formatValidation(config)).toEqual({ text: 'the config file has problems (the last good config keeps running):\nline 6, column 18: b\n', valid: false });
    const rejected = [{ index: 1, line: 5, column: 5, problems: ['line 6, column 18: b'] }];
    expect(formatValidation({ ...config, applied: 'partial', rejected }).text).toBe(
      'the config file has problems: 1 entry left out, the valid ones run (nothing running was stopped or changed):\nline 6, column 18: b\n',
    );
    expect(formatValidation({ ...config, error: null }).text).toBe('the config file has problems (the last good config keeps running)\n');
    expect(formatValidation({ ...config, valid: true, error: null, applied: 'all' })).toEqual({ text: 'the config file is valid\n', valid: true });
  });
});

describe('lines', () => {
  it('one tunnel', () => {
    expect(formatRecordLine(rec({ status: 'RUNNING' }), plain)).toBe('db (1a2b3c4d): RUNNING, up 3m05s\n');
    expect(formatRecordLine(rec({ status: 'STOPPED', last_error: 'old' }), plain)).toBe('db (1a2b3c4d): STOPPED\n');
    expect(formatRecordLine(rec({ status: 'FAILED', last_error: 'host key mismatch' }), plain)).toBe('db (1a2b3c4d): FAILED, host key mismatch\n');
  });
  it('a reload', () => {
    expect(formatReload({ type: 'reload', at: '', ok: true, error: null, added: ['a', 'b'], removed: [], unchanged: ['c'], changed: [], left_out: 0 })).toBe('reloaded: 2 added, 0 removed, 1 unchanged\n');
    expect(
      formatReload({ type: 'reload', at: '', ok: true, error: 'line 6, column 18: tunnels[1].local_port: expected a port', added: ['a'], removed: [], unchanged: [], changed: [], left_out: 1 }),
    ).toBe('reloaded: 1 added, 0 removed, 0 unchanged; 1 left out (nothing running was stopped or changed):\n  line 6, column 18: tunnels[1].local_port: expected a port\n');
  });
  it('the config file problem, or nothing when it is fine', () => {
    expect(formatConfigProblem({ valid: true, error: null, missing: false, applied: 'all', rejected: [] }, plain)).toBe('');
    expect(formatConfigProblem({ valid: false, error: 'line 2, column 3: a\nline 4, column 1: b', missing: false, applied: 'none', rejected: [] }, plain)).toBe(
      'config file invalid, the last good config keeps running:\n  line 2, column 3: a\n  line 4, column 1: b\n',
    );
    expect(formatConfigProblem({ valid: true, error: null, missing: true, applied: 'none', rejected: [] }, plain)).toContain('missing');
    const rejected = [{ index: 1, line: 5, column: 5, problems: ['line 6, column 18: b'] }];
    expect(formatConfigProblem({ valid: false, error: 'line 6, column 18: b', missing: false, applied: 'partial', rejected }, plain)).toBe(
      'config file has problems: 1 entry left out, the valid ones run; nothing running was stopped or changed:\n  line 6, column 18: b\n',
    );
  });
  it('directions', () => {
    expect(directionWords('remote_to_local')).toBe('remote to local');
    expect(directionWords('local_to_remote')).toBe('local to remote');
    expect(directionWords('socks')).toBe('SOCKS proxy');
  });
});

describe('formatProgress', () => {
  it('one line with every waited-for tunnel and why a RETRYING one is not up yet', () => {
    const records = [rec({ status: 'RUNNING' }), rec({ name: 'web', status: 'RETRYING', last_error: 'connection refused' })];
    expect(formatProgress(records, 3200, plain)).toBe('waiting 3s: db RUNNING, web RETRYING (connection refused)');
  });
  it('fits the terminal, keeping colour codes balanced', () => {
    const records = [rec({ status: 'STARTING' }), rec({ name: 'web', status: 'RETRYING', last_error: 'connection refused' })];
    const out = formatProgress(records, 0, { color: true, now }, 31);
    expect(out.replace(/\x1b\[[0-9;]*m/g, '')).toBe('waiting 0s: db STARTING, web …');
    expect(out.endsWith('\x1b[0m')).toBe(true);
  });
});

describe('useColor', () => {
  it('only on a terminal without NO_COLOR', () => {
    expect(useColor(true, {})).toBe(true);
    expect(useColor(false, {})).toBe(false);
    expect(useColor(true, { NO_COLOR: '1' })).toBe(false);
    expect(useColor(true, { NO_COLOR: '' })).toBe(true);
    expect(useColor(true, { TERM: 'dumb' })).toBe(false);
  });
});
