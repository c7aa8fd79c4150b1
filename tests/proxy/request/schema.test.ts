import { describe, expect, it } from 'vitest';
import { expandEnv, proxySchema } from '../../../src/config/proxy-schema.js';
import { ENDPOINTS } from '../../../src/proxy/routes.js';
import { parseModelRequest } from '../../../src/proxy/request/json-body.js';
import { splitModel, withModel } from '../../../src/proxy/route/model-field.js';
import { compile, keyRefusal, withCredentialFor } from '../../../src/proxy/route/providers.js';
import { keyOf } from '../../../src/proxy/relay/provider.js';

describe('proxySchema', () => {
  it('fills defaults and keeps unknown keys', () => {
    const r = proxySchema.safeParse({ extra: 1, providers: { gpu1: { base_url: 'http://127.0.0.1:11434/v1', note: 'x' } } });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ default_timeout: 600, extra: 1, providers: { gpu1: { base_url: 'http://127.0.0.1:11434/v1', note: 'x' } } });
    expect(proxySchema.parse({})).toEqual({ default_timeout: 600, providers: {} });
  });

  it('accepts the example of SPEC §9', () => {
    const r = proxySchema.safeParse({
      default_timeout: 600,
      api_keys: ['${PROXY_KEY}'],
      providers: { gpu1: { base_url: 'http://127.0.0.1:11434/v1', api_key: '${GPU1_KEY}', timeout: 120 } },
    });
    expect(r.success).toBe(true);
  });

  it.each([
    [{ default_timeout: '600' }, ['default_timeout']],
    [{ default_timeout: 0 }, ['default_timeout']],
    [{ default_timeout: 100_000 }, ['default_timeout']],
    [{ api_keys: 'k' }, ['api_keys']],
    [{ api_keys: [] }, ['api_keys']],
    [{ api_keys: ['ok', 3] }, ['api_keys', 1]],
    [{ providers: { 'a:b': { base_url: 'http://x/v1' } } }, ['providers', 'a:b']],
    [{ providers: { '-a': { base_url: 'http://x/v1' } } }, ['providers', '-a']],
    [{ providers: { a: {} } }, ['providers', 'a', 'base_url']],
    [{ providers: { a: { base_url: 'ftp://x/v1' } } }, ['providers', 'a', 'base_url']],
    [{ providers: { a: { base_url: 'not a url' } } }, ['providers', 'a', 'base_url']],
    [{ providers: { a: { base_url: 'http://x/v1?q=1' } } }, ['providers', 'a', 'base_url']],
    [{ providers: { a: { base_url: 'http://x/v1', api_key: 5 } } }, ['providers', 'a', 'api_key']],
    [{ providers: { a: { base_url: 'http://x/v1', timeout: -1 } } }, ['providers', 'a', 'timeout']],
    [{ providers: { a: { base_url: 'http://x/v1', keep_alive: -1 } } }, ['providers', 'a', 'keep_alive']],
    [{ providers: { a: { base_url: 'http://x/v1', keep_alive: '4s' } } }, ['providers', 'a', 'keep_alive']],
    [{ providers: { a: { base_url: 'http://x/v1', keep_alive: 601 } } }, ['providers', 'a', 'keep_alive']],
    [{ providers: [] }, ['providers']],
  ])('rejects %j at %j', (value, path) => {
    const r = proxySchema.safeParse(value);
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path)).toContainEqual(path);
    expect(r.error!.issues.every((i) => i.message.startsWith('expected'))).toBe(true);
  });
});

describe('forward_headers', () => {
  it('takes header names as written', () => {
    expect(proxySchema.parse({ forward_headers: ['X-Tenant-Id', 'baggage'] }).forward_headers).toEqual(['X-Tenant-Id', 'baggage']);
  });

  it.each([
    ['Authorization', '"Authorization" cannot be forwarded: credentials never reach a provider; give the provider its own api_key'],
    ['x-api-key', '"x-api-key" cannot be forwarded: credentials never reach a provider; give the provider its own api_key'],
    ['Cookie', '"Cookie" cannot be forwarded: credentials never reach a provider; give the provider its own api_key'],
    ['content-length', '"content-length" cannot be forwarded: the proxy sets this header itself'],
    ['x tenant', "expected a header name (letters, digits and !#$%&'*+.^_`|~-)"],
  ])('refuses %s, saying why', (name, message) => {
    const r = proxySchema.safeParse({ forward_headers: [name] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({ path: ['forward_headers', 0], message });
  });
});

describe('expandEnv', () => {
  it('replaces ${NAME} from the given environment', () => {
    expect(expandEnv('${A}', { A: 'x' })).toEqual({ ok: true, value: 'x' });
    expect(expandEnv('pre-${A}-${B_2}', { A: 'x', B_2: 'y' })).toEqual({ ok: true, value: 'pre-x-y' });
    expect(expandEnv('no refs $A {A}', {})).toEqual({ ok: true, value: 'no refs $A {A}' });
    expect(expandEnv('$${A}', { A: 'x' })).toEqual({ ok: true, value: '${A}' });
  });

  it('names the first unset or empty variable', () => {
    expect(expandEnv('${A}${B}', { A: 'x' })).toEqual({ ok: false, error: { reason: 'unset_variable', variable: 'B' } });
    expect(expandEnv('${E}', { E: '' })).toEqual({ ok: false, error: { reason: 'unset_variable', variable: 'E' } });
  });
});

describe('model names', () => {
  it('split at the first colon', () => {
    expect(splitModel('gpu1:llama3:8b')).toEqual({ prefix: 'gpu1', model: 'llama3:8b' });
    expect(splitModel('llama3')).toBeNull();
    expect(splitModel(':x')).toBeNull();
  });

  it('reach the upstream bare, every other field untouched', () => {
    const r = parseModelRequest(ENDPOINTS[0]!, Buffer.from('{"model":"p:a:b","messages":[{"role":"user","content":"hi"}],"n":2}'));
    expect(r.ok && r.value.model).toBe('p:a:b');
    const split = splitModel(r.ok ? r.value.model : '')!;
    expect(split).toEqual({ prefix: 'p', model: 'a:b' });
    expect(withModel(r.ok ? r.value.bytes : Buffer.alloc(0), split.model).toString()).toBe('{"model":"a:b","messages":[{"role":"user","content":"hi"}],"n":2}');
  });
});

describe('a provider key with white space around it, or only white space', () => {
  it('is sent trimmed, as the provider reads it; a blank one is refused with a message, and never sent', () => {
    const config = proxySchema.parse({
      providers: {
        blank: { base_url: 'http://127.0.0.1:1/v1', api_key: '${BLANK_KEY}' },
        padded: { base_url: 'http://127.0.0.1:1/v1', api_key: '${PADDED_KEY}' },
      },
    });
    const runtime = compile(config, { BLANK_KEY: ' \t ', PADDED_KEY: ' k-123\t' });
    const provider = (prefix: string) => {
      const entry = runtime.providers.get(prefix)!;
      if (entry.kind !== 'url') throw new Error('expected a base_url provider');
      return entry.provider;
    };
    expect(provider('blank').credential).toBeNull();
    expect(keyOf(provider('blank'))).toBeNull();
    expect(withCredentialFor(provider('blank'), 'anthropic').credential).toBeNull();
    expect(keyRefusal(provider('blank'))).toEqual({ status: 500, type: 'server_error', code: 'provider_key_unusable', message: 'provider "blank" has an api_key that is only white space' });
    expect(keyOf(provider('padded'))).toBe('k-123');
    expect(provider('padded').credential).toEqual({ name: 'authorization', value: 'Bearer k-123' });
    expect(withCredentialFor(provider('padded'), 'anthropic').credential).toEqual({ name: 'x-api-key', value: 'k-123' });
  });

  it('is refused as unset when its variable is set but empty, and the message says both', () => {
    const runtime = compile(proxySchema.parse({ providers: { e: { base_url: 'http://127.0.0.1:1/v1', api_key: '${EMPTY_KEY}' } } }), { EMPTY_KEY: '' });
    const entry = runtime.providers.get('e')!;
    if (entry.kind !== 'url') throw new Error('expected a base_url provider');
    expect(entry.provider.credential).toBeNull();
    expect(keyRefusal(entry.provider)).toEqual({
      status: 500,
      type: 'server_error',
      code: 'provider_key_unset',
      message: 'provider "e" has api_key ${EMPTY_KEY}, and that environment variable is not set, or empty, on the server',
    });
  });
});
