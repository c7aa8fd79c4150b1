// tunnel-cli's argument readers: hashes, time-outs, and option values as the user typed them.
import { describe, expect, it } from 'vitest';
import { parseTimeout, rawOption, validateHashArg } from '../../../src/cli/args.js';

describe('arguments', () => {
  it('hashes: hex, 4 to 32 characters, lower-cased', () => {
    expect(validateHashArg('1A2B')).toEqual({ ok: true, value: '1a2b' });
    for (const bad of ['abc', 'xyz1', '', '1a2b/../x', 'a'.repeat(33)]) expect(validateHashArg(bad).ok, bad).toBe(false);
  });
  it('timeouts: positive seconds', () => {
    expect(parseTimeout('2.5')).toEqual({ ok: true, value: 2.5 });
    expect(parseTimeout(30)).toEqual({ ok: true, value: 30 });
    for (const bad of ['0', '-1', 'soon', '']) expect(parseTimeout(bad).ok, bad).toBe(false);
  });
  it('raw option values keep their text', () => {
    expect(rawOption(['status', '--token', '0099'], 'token')).toBe('0099');
    expect(rawOption(['--token=00a', 'status', '--token', '007'], 'token')).toBe('007');
    expect(rawOption(['status', '--', '--token', 'x'], 'token')).toBeUndefined();
  });
});
