import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { formatProblem, parseConfigText } from '../../../src/config/load.js';
import { valid } from './helpers.js';

const sample = readFileSync(new URL('../../../config/config.yaml', import.meta.url), 'utf8');

describe('config/config.yaml, the shipped sample', () => {
  test('is valid and starts no tunnel', () => {
    expect(parseConfigText(sample)).toEqual({ kind: 'ok', config: { tunnels: [], proxy: null }, warnings: [] });
  });

  test('its commented examples are valid when uncommented, in both modes', () => {
    const uncommented = sample
      .replace(/^tunnels: \[\]\n/m, '')
      .split('\n')
      .map((l) => (/^# (tunnels:|ssh_options:|proxy:| {2})/.test(l) ? l.slice(2) : l))
      .join('\n');
    for (const mode of ['default', 'ssh-standard'] as const) {
      const { config, warnings } = valid(uncommented, { mode });
      expect(warnings).toEqual([]);
      expect(config.tunnels.map((t) => [t.name, t.direction])).toEqual([
        ['db', 'remote_to_local'],
        ['web', 'local_to_remote'],
      ]);
      expect(config.tunnels[1]!.ssh_options).toEqual({ ServerAliveInterval: '10', ConnectTimeout: '20', Compression: 'yes' });
      expect(config.proxy?.providers.gpu1?.base_url).toBe('http://127.0.0.1:11434/v1');
    }
  });
});

describe("README.md's config file section", () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## The config file'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

  test('its sample error is what the loader says for its sample with local_port 70000', () => {
    const shown = /`(line 5, column 17: [^`]*)`/.exec(section)?.[1];
    expect(shown).toBeDefined();
    const broken = yaml.replace('local_port: "127.0.0.1:15432"', 'local_port: 70000 ');
    expect(broken.split('\n')[4]).toMatch(/^ {4}local_port: 70000/);
    const r = parseConfigText(broken);
    if (r.kind !== 'partial') throw new Error(r.kind);
    expect(r.problems.map(formatProblem)).toEqual([shown]);
  });
});
