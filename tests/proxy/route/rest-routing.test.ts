import { describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { compile } from '../../../src/proxy/route/providers.js';
import { createRests, MAX_REST_MS, retryAfterMs } from '../../../src/proxy/route/retry-after-rests.js';
import { targetsFor } from '../../../src/proxy/route/targets.js';

describe('retryAfterMs', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('Tue, 24 Nov 2026 06:00:00 GMT');
    expect(retryAfterMs('30', now)).toBe(30_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Tue, 24 Nov 2026 06:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Tue, 24 Nov 2026 05:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('-5', now)).toBeNull();
    expect(retryAfterMs('1.5', now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
  });
});

describe('createRests', () => {
  it('rests a provider until then, at most an hour, and forgets it after', () => {
    let now = 0;
    const rests = createRests(() => now);
    rests.note('a', undefined);
    rests.note('b', 'junk');
    expect([rests.left('a'), rests.left('b')]).toEqual([0, 0]);
    rests.note('a', '10');
    rests.note('b', '999999');
    expect(rests.left('a')).toBe(10_000);
    expect(rests.left('b')).toBe(MAX_REST_MS);
    now = 10_000;
    expect(rests.left('a')).toBe(0);
    expect(rests.left('b')).toBe(MAX_REST_MS - 10_000);
  });

  it('Retry-After-Ms wins over Retry-After (the OpenAI clients wait for it), and neither means no rest', () => {
    const now = 0;
    const rests = createRests(() => now);
    rests.note('a', '30', '1.5');
    rests.note('b', '30', 'junk');
    rests.note('c', undefined, '250');
    rests.note('d', undefined, undefined);
    expect([rests.left('a'), rests.left('b'), rests.left('c'), rests.left('d')]).toEqual([1.5, 30_000, 250, 0]);
  });
});

describe('targetsFor', () => {
  const runtime = compile(
    proxySchema.parse({
      providers: { gpu1: { base_url: 'http://127.0.0.1:1/v1' }, gpu2: { base_url: 'http://127.0.0.1:2/v1' } },
      aliases: { 'gpt-4o-mini': 'gpu1:llama3:8b', fast: ['gpu1:llama3:8b', 'gpu2:llama3:8b'], 'gpu1:shadow': 'gpu2:x' },
    }),
    {},
  );
  const withDefault = compile(proxySchema.parse({ providers: { gpu1: { base_url: 'http://127.0.0.1:1/v1' } }, default_provider: 'gpu1' }), {});

  it('an alias first (even one shaped like prefix:model), then the prefix split at the first colon, then default_provider', () => {
    expect(targetsFor('fast', runtime)).toEqual({ ok: true, value: [{ prefix: 'gpu1', model: 'llama3:8b' }, { prefix: 'gpu2', model: 'llama3:8b' }] });
    expect(targetsFor('gpu1:shadow', runtime)).toEqual({ ok: true, value: [{ prefix: 'gpu2', model: 'x' }] });
    expect(targetsFor('gpu2:a:b:c', runtime)).toEqual({ ok: true, value: [{ prefix: 'gpu2', model: 'a:b:c' }] });
    expect(targetsFor('llama3:8b', withDefault)).toEqual({ ok: true, value: [{ prefix: 'gpu1', model: 'llama3:8b' }] });
  });

  it('anything else is model_not_found naming what is known', () => {
    const r = targetsFor('nope:x', runtime);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatchObject({ status: 404, code: 'model_not_found', message: 'no provider "nope" (known prefixes: gpu1, gpu2; aliases: gpt-4o-mini, fast, gpu1:shadow)' });
    expect(!targetsFor('bare', runtime).ok && (targetsFor('bare', runtime) as { error: { message: string } }).error.message).toMatch(/has no provider prefix/);
    expect(targetsFor('gpu1:', runtime)).toMatchObject({ ok: false, error: { status: 400 } });
  });
});
