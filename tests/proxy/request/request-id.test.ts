import { describe, expect, it } from 'vitest';
import { pickRequestId, requestIdCounter } from '../../../src/proxy/request/request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('pickRequestId', () => {
  it('echoes a short plain id from the client', () => {
    expect(pickRequestId('req-123.abc')).toBe('req-123.abc');
    expect(pickRequestId('a:b/c@d+e=f_g')).toBe('a:b/c@d+e=f_g');
  });

  it('replaces an id that could forge a header or a log line, or is too long', () => {
    for (const bad of ['a b', 'x\ny', 'é', '"quoted"', 'a'.repeat(129), '', ['a', 'b']]) {
      expect(pickRequestId(bad)).toMatch(UUID);
    }
  });

  it('draws UUID-shaped ids that differ from one request to the next', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = pickRequestId(undefined);
      expect(id).toMatch(UUID);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
  });
});

describe('requestIdCounter', () => {
  const base = '01234567-89ab-cdef-0123-';

  it('counts in the last group, the low part carrying into the high one', () => {
    const next = requestIdCounter(base, 0x00001, 0xffffffe);
    expect([next(), next(), next()]).toEqual([`${base}00001fffffff`, `${base}000020000000`, `${base}000020000001`]);
  });

  it('wraps to zero after the last of 48 bits', () => {
    const next = requestIdCounter(base, 0xfffff, 0xfffffff - 1);
    expect([next(), next()]).toEqual([`${base}ffffffffffff`, `${base}000000000000`]);
  });
});
