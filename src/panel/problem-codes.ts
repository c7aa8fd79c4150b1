import type { ConfigProblem } from '../config/types.js';
import { problemText } from '../config-edit/field-errors.js';
import { REMOTE_HOST_EXPECTED } from '../config/remote-host.js';
import { ENDPOINT_EXPECTED } from '../tunnel/endpoint.js';
import { DIRECTION_EXPECTED } from '../tunnel/spec.js';

/**
 * A problem of the config file as the page shows it: a code its catalogues word
 * (`problem.<code>`) with the values that go in, where it is, and the daemon's
 * English sentence. The code stays visible next to the translation, so a reader can
 * search for it.
 */
export interface CodedProblem {
  line: number;
  column: number;
  field: string;
  code: ProblemCode;
  params: Record<string, string>;
  message: string;
}

export const PROBLEM_CODES = [
  'missing_field',
  'invalid_port',
  'invalid_remote_host',
  'invalid_direction',
  'invalid_name',
  'out_of_range',
  'invalid_check_type',
  'invalid_check_path',
  'port_in_use',
  'duplicate_tunnel',
  'invalid_value',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

const MISSING = 'nothing (the field is missing)';

/** What the schema expected, matched against its own wording (the config module words its problems once). */
const RULES: { code: ProblemCode; test: (expected: string) => RegExpExecArray | boolean | null; params?: (m: RegExpExecArray) => Record<string, string> }[] = [
  { code: 'invalid_port', test: (e) => e === ENDPOINT_EXPECTED },
  { code: 'invalid_remote_host', test: (e) => e === REMOTE_HOST_EXPECTED },
  { code: 'invalid_direction', test: (e) => e === DIRECTION_EXPECTED },
  { code: 'invalid_name', test: (e) => /^a name of at most (\d+) characters/.exec(e), params: (m) => ({ max: m[1] ?? '' }) },
  { code: 'out_of_range', test: (e) => /^a whole number from (\d+) to (\d+)$/.exec(e), params: (m) => ({ min: m[1] ?? '', max: m[2] ?? '' }) },
  { code: 'invalid_check_type', test: (e) => e === 'tcp or http' },
  { code: 'invalid_check_path', test: (e) => /^an absolute request path/.test(e) },
  { code: 'port_in_use', test: (e) => /^a listening address and port no other tunnel uses/.test(e) },
  { code: 'duplicate_tunnel', test: (e) => /^a tunnel that differs from every other/.test(e) },
];

export function codeProblem(p: ConfigProblem): CodedProblem {
  const base = { line: p.line, column: p.column, field: p.field, message: problemText(p) };
  if (p.found === MISSING) return { ...base, code: 'missing_field', params: {} };
  for (const rule of RULES) {
    const m = rule.test(p.expected);
    if (m) return { ...base, code: rule.code, params: { found: p.found, ...(m !== true && rule.params ? rule.params(m) : {}) } };
  }
  // Rarer problems: the page words the frame, the expectation stays as the daemon wrote it.
  return { ...base, code: 'invalid_value', params: { expected: p.expected, found: p.found } };
}
