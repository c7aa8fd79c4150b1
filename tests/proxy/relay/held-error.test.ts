import { describe, expect, it } from 'vitest';
import { HeldError, MAX_SCRUBBED_ERROR_BYTES } from '../../../src/proxy/relay/held-error.js';

const KEY = 'sk-upstream-held-123';

describe('an error answer held back for the key', () => {
  it('blanks the key out, also when it is split across chunks', () => {
    const held = new HeldError(401, []);
    const body = `{"error":{"message":"Incorrect API key provided: ${KEY}"}}`;
    const cut = body.indexOf(KEY) + 5;
    held.push(Buffer.from(body.slice(0, cut)));
    held.push(Buffer.from(body.slice(cut)));
    expect(held.scrubbed(KEY).toString()).toBe('{"error":{"message":"Incorrect API key provided: ***"}}');
  });

  it('keeps at most the first MiB of a larger body, and still blanks the key in it', () => {
    const held = new HeldError(500, []);
    held.push(Buffer.from(`key ${KEY} `));
    held.push(Buffer.alloc(MAX_SCRUBBED_ERROR_BYTES, 'x'));
    held.push(Buffer.from(` and again ${KEY}`));
    const out = held.scrubbed(KEY).toString();
    expect(out.length).toBeLessThanOrEqual(MAX_SCRUBBED_ERROR_BYTES);
    expect(out.startsWith('key *** x')).toBe(true);
    expect(out).not.toContain(KEY);
  });

  it('keeps exactly the first MiB of a body that comes in one piece larger than that', () => {
    const held = new HeldError(500, []);
    held.push(Buffer.alloc(MAX_SCRUBBED_ERROR_BYTES + 10, 'y'));
    expect(held.scrubbed(KEY).length).toBe(MAX_SCRUBBED_ERROR_BYTES);
  });

  it('leaves no part of the key where the cut falls inside it', () => {
    const held = new HeldError(401, []);
    const before = Buffer.alloc(MAX_SCRUBBED_ERROR_BYTES - 10, 'x');
    held.push(before);
    held.push(Buffer.from(`${KEY} and more`));
    const out = held.scrubbed(KEY);
    expect(out.equals(before)).toBe(true);
    expect(out.toString()).not.toContain(KEY.slice(0, 3));
  });

  it('passes a body without the key, or with no key in use, as it came', () => {
    const held = new HeldError(404, []);
    held.push(Buffer.from([0xff, 0xfe, 0x00]));
    expect(held.scrubbed(KEY)).toEqual(Buffer.from([0xff, 0xfe, 0x00]));
    expect(held.scrubbed(null)).toEqual(Buffer.from([0xff, 0xfe, 0x00]));
  });
});
