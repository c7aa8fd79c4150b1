import { describe, expect, test } from 'vitest';
import { formatProblem } from '../../../src/config/load.js';
import { problems, valid } from './helpers.js';

describe('proxy routing keys', () => {
  test('tunnel-bound providers, formats, aliases, default_provider and cors_origins are read', () => {
    const { config, warnings } = valid(`tunnels:
  - { name: llm, remote_host: gpu-box, remote_port: 11434, local_port: 11434 }
proxy:
  providers:
    gpu1: { tunnel: llm, path: /v1 }
    gpu2: { base_url: http://127.0.0.1:11435/v1 }
    claude: { base_url: https://api.anthropic.com/v1, format: anthropic }
    both: { base_url: http://127.0.0.1:8000/v1, format: [openai, anthropic] }
  aliases:
    gpt-4o-mini: gpu1:llama3:8b
    fast: [gpu1:llama3:8b, gpu2:llama3:8b]
  default_provider: gpu1
  cors_origins: ["https://app.example.com"]
`);
    expect(warnings).toEqual([]);
    expect(config.proxy).toMatchObject({
      providers: { gpu1: { tunnel: 'llm', path: '/v1' }, claude: { format: 'anthropic' }, both: { format: ['openai', 'anthropic'] } },
      aliases: { 'gpt-4o-mini': 'gpu1:llama3:8b', fast: ['gpu1:llama3:8b', 'gpu2:llama3:8b'] },
      default_provider: 'gpu1',
      cors_origins: ['https://app.example.com'],
    });
  });

  test('each problem has its line and column and says what was expected', () => {
    const ps = problems(`proxy:
  providers:
    a: { base_url: http://x/v1, tunnel: llm }
    b: { path: /v1 }
    c: { base_url: http://x/v1, format: grpc }
  aliases:
    one: nowhere:m
    two: [a:m, "c"]
  default_provider: zz
  cors_origins: ["https://app.example.com/path"]
`);
    expect(ps.map((p) => [p.line, p.column, p.field])).toEqual([
      [3, 41, 'proxy.providers.a.tunnel'],
      [4, 8, 'proxy.providers.b.base_url'],
      [5, 41, 'proxy.providers.c.format'],
      [7, 10, 'proxy.aliases.one'],
      [8, 16, 'proxy.aliases.two[1]'],
      [9, 21, 'proxy.default_provider'],
      [10, 18, 'proxy.cors_origins[0]'],
    ]);
    expect(formatProblem(ps[3]!)).toBe('line 7, column 10: proxy.aliases.one: expected "<prefix>:<model_name>" with the prefix of a provider (providers: a, b, c), found "nowhere:m"');
    expect(ps[1]!.expected).toContain('tunnel: <name of a tunnel>');
  });

  test('a provider bound to a tunnel the file does not have is kept, with a warning', () => {
    const { config, warnings } = valid(`tunnels: []
proxy:
  providers:
    gpu1: { tunnel: llm }
`);
    expect(config.proxy?.providers.gpu1).toEqual({ tunnel: 'llm' });
    expect(warnings.map((w) => [w.line, w.field])).toEqual([[4, 'proxy.providers.gpu1.tunnel']]);
    expect(formatProblem(warnings[0]!)).toContain('the file has no tunnels');
  });
});
