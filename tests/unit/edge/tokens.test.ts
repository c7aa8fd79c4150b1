import { describe, expect, it } from 'vitest';
import { bearerToken, digestSecret, parseTokens, secretMatches } from '../../../src/edge/tokens.js';

describe('token lists (TUNNEL_API_TOKEN)', () => {
  it('parses comma-separated tokens, ignoring blanks', () => {
    expect(parseTokens(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(parseTokens(',second')).toEqual(['second']);
    expect(parseTokens('')).toBeNull();
    expect(parseTokens(' , ')).toBeNull();
    expect(parseTokens(undefined)).toBeNull();
  });
});

describe('bearer header', () => {
  it('takes the one word after Bearer, any case, spaces or tabs around', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer \tabc \t')).toBe('abc');
    for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Bearerabc']) expect(bearerToken(bad), String(bad)).toBeNull();
  });
});

describe('secret comparison', () => {
  it('compares exactly, against every digest', () => {
    const digests = ['x', 'abc'].map(digestSecret);
    expect(secretMatches('abc', digests)).toBe(true);
    expect(secretMatches('x', digests)).toBe(true);
    for (const bad of ['ab', 'abcd', '', 'ABC', 'abc ']) expect(secretMatches(bad, digests), bad).toBe(false);
    expect(secretMatches('abc', [])).toBe(false);
  });
});
