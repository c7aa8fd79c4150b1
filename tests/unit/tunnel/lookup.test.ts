import { describe, expect, test } from 'vitest';
import { lookupHash, MIN_PREFIX } from '../../../src/tunnel/lookup.js';

const HASHES = ['e0bf7ece779107669cd6206f94fbd9f2', 'e0bf1111779107669cd6206f94fbd9f2', '2628ee509f29859e1ea221b859407a07'];

describe('lookupHash', () => {
  test('a full hash finds its tunnel', () => {
    expect(lookupHash('2628ee509f29859e1ea221b859407a07', HASHES)).toEqual({ ok: true, value: '2628ee509f29859e1ea221b859407a07' });
  });

  test('a unique prefix of at least 4 characters finds it', () => {
    expect(MIN_PREFIX).toBe(4);
    expect(lookupHash('2628', HASHES)).toEqual({ ok: true, value: '2628ee509f29859e1ea221b859407a07' });
    expect(lookupHash('e0bf7', HASHES)).toEqual({ ok: true, value: 'e0bf7ece779107669cd6206f94fbd9f2' });
  });

  test('upper case is accepted', () => {
    expect(lookupHash('2628EE', HASHES)).toEqual({ ok: true, value: '2628ee509f29859e1ea221b859407a07' });
  });

  test('an ambiguous prefix is an error that lists the matches', () => {
    const r = lookupHash('e0bf', HASHES);
    expect(r.ok).toBe(false);
    if (r.ok || r.error.reason !== 'ambiguous') throw new Error('expected ambiguous');
    expect(r.error.matches).toEqual(['e0bf7ece779107669cd6206f94fbd9f2', 'e0bf1111779107669cd6206f94fbd9f2']);
    expect(r.error.message).toContain('e0bf7ece779107669cd6206f94fbd9f2');
    expect(r.error.message).toContain('e0bf1111779107669cd6206f94fbd9f2');
  });

  test.each([['262'], [''], ['zzzz'], ['2628-'], ['../etc'], ['a'.repeat(33)]])('%j is not a valid hash or prefix', (p) => {
    expect(lookupHash(p, HASHES)).toMatchObject({ ok: false, error: { reason: 'invalid' } });
  });

  test('no match is not_found', () => {
    expect(lookupHash('ffff', HASHES)).toMatchObject({ ok: false, error: { reason: 'not_found' } });
    expect(lookupHash('2628', [])).toMatchObject({ ok: false, error: { reason: 'not_found' } });
  });
});
