import { expect } from 'vitest';
import { formatProblem, parseConfigText, type ParseOptions } from '../../../src/config/load.js';
import type { Config, ConfigProblem } from '../../../src/config/types.js';

/** Parses text that must be valid; fails the test with every problem otherwise. */
export function valid(text: string, opts?: ParseOptions): { config: Config; warnings: ConfigProblem[] } {
  const r = parseConfigText(text, opts);
  if (r.kind !== 'ok') {
    throw new Error(`expected a valid config, got ${r.kind}:\n${r.kind === 'invalid' || r.kind === 'partial' ? r.problems.map(formatProblem).join('\n') : ''}`);
  }
  return { config: r.config, warnings: r.warnings };
}

/** Parses text that must have problems (whole file or some entries); returns them. */
export function problems(text: string, opts?: ParseOptions): ConfigProblem[] {
  const r = parseConfigText(text, opts);
  expect(['invalid', 'partial'], `expected problems for:\n${text.slice(0, 400)}`).toContain(r.kind);
  return r.kind === 'invalid' || r.kind === 'partial' ? r.problems : [];
}

/** A one-tunnel file with `fields` overriding a valid entry (a null value leaves the field out). */
export function oneTunnel(fields: Record<string, string | null>): string {
  const base: Record<string, string | null> = {
    name: 'db',
    remote_host: 'user@bastion',
    remote_port: '5432',
    local_port: '"127.0.0.1:15432"',
    direction: 'remote_to_local',
    ...fields,
  };
  const lines = Object.entries(base)
    .filter(([, v]) => v !== null)
    .map(([k, v], i) => `${i === 0 ? '  - ' : '    '}${k}: ${v}`);
  return `tunnels:\n${lines.join('\n')}\n`;
}
