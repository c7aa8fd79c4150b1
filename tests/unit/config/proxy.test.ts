import { describe, expect, test } from 'vitest';
import { formatProblem } from '../../../src/config/load.js';
import { problems, valid } from './helpers.js';

describe('the proxy section', () => {
  test('absent or empty means no proxy configuration', () => {
    expect(valid('tunnels: []\n').config.proxy).toBeNull();
    expect(valid('proxy:\n').config.proxy).toBeNull();
    expect(valid('proxy: ~\n').config.proxy).toBeNull();
  });

  test('a full section is read, ${VAR} references kept as written', () => {
    const { config, warnings } = valid(`proxy:
  default_timeout: 300
  api_keys: ["\${PROXY_KEY}"]
  providers:
    gpu1:
      base_url: http://127.0.0.1:11434/v1
      api_key: \${GPU1_KEY}
      timeout: 120
    cloud: { base_url: "https://api.example.com/v1" }
`);
    expect(warnings).toEqual([]);
    expect(config.proxy).toEqual({
      default_timeout: 300,
      api_keys: ['${PROXY_KEY}'],
      providers: {
        gpu1: { base_url: 'http://127.0.0.1:11434/v1', api_key: '${GPU1_KEY}', timeout: 120 },
        cloud: { base_url: 'https://api.example.com/v1' },
      },
    });
  });

  test('defaults fill what is left out', () => {
    expect(valid('proxy: {}\n').config.proxy).toEqual({ default_timeout: 600, providers: {} });
  });

  test('each problem points at the node it is about', () => {
    const ps = problems(`proxy:
  default_timeout: soon
  providers:
    gpu1:
      timeout: -5
    "bad:prefix": { base_url: http://x }
    ftp: { base_url: "ftp://example.com" }
`);
    expect(ps.map((p) => [p.line, p.column, p.field, p.found])).toEqual([
      [2, 20, 'proxy.default_timeout', '"soon"'],
      [5, 7, 'proxy.providers.gpu1.base_url', 'nothing (the field is missing)'],
      [5, 16, 'proxy.providers.gpu1.timeout', '"-5"'],
      [6, 5, 'proxy.providers["bad:prefix"]', '"bad:prefix"'],
      [7, 22, 'proxy.providers.ftp.base_url', '"ftp://example.com"'],
    ]);
    expect(formatProblem(ps[0]!)).toBe('line 2, column 20: proxy.default_timeout: expected a number of seconds, found "soon"');
    expect(ps[4]!.expected).toContain('http:// or https://');
  });

  test('a wrong shape is named', () => {
    expect(problems('proxy: [a]\n')[0]).toMatchObject({ line: 1, column: 8, field: 'proxy', found: 'a list' });
    expect(problems('proxy: { providers: [a] }\n')[0]).toMatchObject({ field: 'proxy.providers', found: 'a list' });
  });

  test('keys never appear in a problem', () => {
    const ps = problems(`proxy:
  api_keys: [12345678, ""]
  providers:
    gpu1: { base_url: http://x, api_key: 987654321 }
`);
    expect(ps.map((p) => [p.field, p.found])).toEqual([
      ['proxy.api_keys[0]', 'a number (not shown)'],
      ['proxy.api_keys[1]', 'a string (not shown)'],
      ['proxy.providers.gpu1.api_key', 'a number (not shown)'],
    ]);
    const text = ps.map(formatProblem).join('\n');
    expect(text).not.toContain('12345678');
    expect(text).not.toContain('987654321');
  });

  test('unknown keys are kept and warned about', () => {
    const { config, warnings } = valid(`proxy:
  retries: 3
  providers:
    gpu1: { base_url: http://x, organisation: acme }
`);
    expect(warnings.map((w) => [w.line, w.column, w.field])).toEqual([
      [2, 3, 'proxy.retries'],
      [4, 33, 'proxy.providers.gpu1.organisation'],
    ]);
    expect(config.proxy).toMatchObject({ retries: 3, providers: { gpu1: { organisation: 'acme' } } });
  });

  test('proxy problems are reported together with tunnel problems', () => {
    const ps = problems(`tunnels:\n  - remote_host: -x\nproxy: { default_timeout: 0 }\n`);
    // Sorted by position: missing fields point at the entry, before its remote_host value.
    expect(ps.map((p) => p.field)).toEqual([
      'tunnels[0].remote_port',
      'tunnels[0].local_port',
      'tunnels[0].remote_host',
      'proxy.default_timeout',
    ]);
  });
});
