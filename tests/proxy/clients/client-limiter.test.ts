// The clients' limits on a test clock: the sliding minute for requests and tokens,
// requests under way, and the x-ratelimit-* headers; and the model patterns.
import { describe, expect, it } from 'vitest';
import { ClientLimiter } from '../../../src/proxy/clients/limiter.js';
import { allows, patternMatcher, type ClientRule } from '../../../src/proxy/clients/rules.js';

const rule = (over: Partial<ClientRule>): ClientRule => ({ name: 'c', digest: null, models: null, matchers: null, rpm: null, tpm: null, maxConcurrent: null, ...over });

describe('the limiter', () => {
  it('rpm: the minute slides; Retry-After is when the oldest request leaves it', () => {
    let now = 0;
    const l = new ClientLimiter(() => now);
    const r = rule({ rpm: 2 });
    expect(l.take(r)).toBeNull();
    now = 20_000;
    expect(l.take(r)).toBeNull();
    now = 30_000;
    expect(l.take(r)).toMatchObject({ limit: 'rpm', retryAfterSeconds: 30 });
    expect(Object.fromEntries(l.headers(r))).toEqual({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '30s' });
    now = 60_001;
    expect(l.take(r)).toBeNull();
    expect(l.take(r)).toMatchObject({ limit: 'rpm', retryAfterSeconds: 20 });
  });

  it('tpm: tokens count from the end of their request until a minute later', () => {
    let now = 0;
    const l = new ClientLimiter(() => now);
    const r = rule({ tpm: 100 });
    expect(l.take(r)).toBeNull();
    l.release(r, 60);
    now = 10_000;
    expect(l.take(r)).toBeNull();
    l.release(r, 50);
    expect(l.take(r)).toMatchObject({ limit: 'tpm', retryAfterSeconds: 50 });
    expect(Object.fromEntries(l.headers(r))).toMatchObject({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '50s' });
    now = 60_001;
    expect(l.take(r)).toBeNull();
  });

  it('max_concurrent: a place is given back when a request ends, whatever its tokens', () => {
    const l = new ClientLimiter(() => 0);
    const r = rule({ maxConcurrent: 2 });
    expect(l.take(r)).toBeNull();
    expect(l.take(r)).toBeNull();
    expect(l.take(r)).toMatchObject({ limit: 'max_concurrent', retryAfterSeconds: 1 });
    l.release(r, 0);
    expect(l.take(r)).toBeNull();
    expect(l.headers(r)).toEqual([]);
  });
});

describe('model patterns', () => {
  it.each<[string, string, boolean]>([
    ['gpu1:*', 'gpu1:llama3:8b', true],
    ['gpu1:*', 'gpu10:x', false],
    ['*:llama3:8b', 'gpu2:llama3:8b', true],
    ['fast', 'fast', true],
    ['fast', 'faster', false],
    ['a.b', 'axb', false],
    ['gpu1:meta/*', 'gpu1:meta/Llama-3.1-8B', true],
  ])('%s against %s: %s', (pattern, model, expected) => {
    expect(patternMatcher(pattern).test(model)).toBe(expected);
  });

  it('a name outside the patterns is allowed when every target it resolves to is inside', () => {
    const r = rule({ models: ['gpu1:*'], matchers: [patternMatcher('gpu1:*')] });
    expect(allows(r, 'fast', [{ prefix: 'gpu1', model: 'a' }])).toBe(true);
    expect(allows(r, 'fast', [{ prefix: 'gpu1', model: 'a' }, { prefix: 'gpu2', model: 'a' }])).toBe(false);
    expect(allows(rule({}), 'anything', [])).toBe(true);
  });
});
