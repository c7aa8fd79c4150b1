import { describe, expect, it } from 'vitest';
import { KeyScrubber, keySpellings, keyStartAtEnd, scrubText } from '../../../src/proxy/relay/key-scrub.js';

const KEY = 'sk-A/se"cr\\et+key==';

describe('key spellings', () => {
  it('are the key as sent, JSON-escaped, with escaped slashes and URL-encoded, each once, longest first', () => {
    const spellings = keySpellings(KEY);
    for (const form of ['sk-A/se"cr\\et+key==', 'sk-A/se\\"cr\\\\et+key==', 'sk-A\\/se\\"cr\\\\et+key==', 'sk-A%2Fse%22cr%5Cet%2Bkey%3D%3D', 'sk-A%2fse%22cr%5cet%2bkey%3d%3d', 'sk-A/se%22cr%5Cet%2Bkey%3D%3D']) {
      expect(spellings).toContain(form);
    }
    expect(new Set(spellings).size).toBe(spellings.length);
    expect(spellings.map((f) => f.length)).toEqual([...spellings.map((f) => f.length)].sort((a, b) => b - a));
    expect(keySpellings('plainkey123')).toEqual(['plainkey123']);
  });

  it('include what the common URL encoders write, as printed by each', () => {
    const key = 'sk-ab+cd/ef== x~y*z';
    const written = {
      'JavaScript encodeURIComponent': 'sk-ab%2Bcd%2Fef%3D%3D%20x~y*z',
      'URLSearchParams, Java URLEncoder': 'sk-ab%2Bcd%2Fef%3D%3D+x%7Ey*z',
      'Python quote': 'sk-ab%2Bcd/ef%3D%3D%20x~y%2Az',
      'Python quote_plus, Go url.QueryEscape': 'sk-ab%2Bcd%2Fef%3D%3D+x~y%2Az',
      'Go url.PathEscape': 'sk-ab+cd%2Fef==%20x~y%2Az',
      'PHP urlencode': 'sk-ab%2Bcd%2Fef%3D%3D+x%7Ey%2Az',
      'PHP rawurlencode': 'sk-ab%2Bcd%2Fef%3D%3D%20x~y%2Az',
    };
    for (const [encoder, form] of Object.entries(written)) {
      expect([encoder, keySpellings(key).includes(form)]).toEqual([encoder, true]);
      expect([encoder, keySpellings(key).includes(form.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()))]).toEqual([encoder, true]);
    }
  });

  it('include what Python writes: quote (keeping /), quote with safe="", quote_plus and urlencode, which encode !\'()*', () => {
    const key = "sk-live(prod)*key!2024'~/x";
    // As printed by urllib.parse: quote(key), quote(key, safe=''), quote_plus(key), urlencode({'k': key})[2:].
    for (const python of ["sk-live%28prod%29%2Akey%212024%27~/x", "sk-live%28prod%29%2Akey%212024%27~%2Fx"]) {
      expect(keySpellings(key)).toContain(python);
      expect(keySpellings(key)).toContain(python.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()));
    }
  });

  it('are replaced by *** in text', () => {
    expect(scrubText(`a ${KEY} b ${JSON.stringify(KEY)} c ${encodeURIComponent(KEY)}`, KEY)).toBe('a *** b "***" c ***');
  });
});

describe('KeyScrubber', () => {
  // Every spelling, split at every point between two pieces: each character becomes `*`, nothing else changes.
  it('masks every spelling wherever a piece boundary falls, keeping the length', () => {
    for (const form of keySpellings(KEY)) {
      const text = `<<${form}>> and ${form}`;
      const want = `<<${'*'.repeat(form.length)}>> and ${'*'.repeat(form.length)}`;
      for (let cut = 0; cut <= text.length; cut++) {
        const s = new KeyScrubber(KEY);
        const out = [s.push(Buffer.from(text.slice(0, cut)), false), s.push(Buffer.from(text.slice(cut)), false), s.flush() ?? Buffer.alloc(0)];
        expect(Buffer.concat(out).toString()).toBe(want);
      }
    }
  });

  it('holds back only a tail that could begin the key, and gives it back at the end', () => {
    const s = new KeyScrubber(KEY);
    expect(s.push(Buffer.from('ends with sk-A'), false).toString()).toBe('ends with ');
    expect(s.flush()?.toString()).toBe('sk-A');
    expect(s.push(Buffer.from('nothing like it'), false).toString()).toBe('nothing like it');
    expect(s.flush()).toBeNull();
  });

  it('leaves the provider\'s buffer as it was', () => {
    const chunk = Buffer.from(`x ${KEY} y`);
    const copy = Buffer.from(chunk);
    new KeyScrubber(KEY).push(chunk, true);
    expect(chunk.equals(copy)).toBe(true);
  });

  it('finds the longest tail that begins a spelling', () => {
    expect(keyStartAtEnd(Buffer.from('abc sk-A/se'), KEY)).toBe(7);
    expect(keyStartAtEnd(Buffer.from('abc sk-A%2F'), KEY)).toBe(7);
    expect(keyStartAtEnd(Buffer.from('abc'), KEY)).toBe(0);
  });
});
