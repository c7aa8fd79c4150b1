// A tunnel's optional `health_check:` (SPEC §5): what catches a tunnel ssh never
// reports broken, such as a frozen client. Read here, run by the supervisor.
import { isMap, isScalar } from 'yaml';
import type { HealthCheck } from '../tunnel/spec.js';
import { child, describe, keyText, quote, type Tree } from './tree.js';

export const HEALTH_CHECK_FIELDS = ['type', 'interval', 'failures', 'path'] as const;
export const HEALTH_CHECK_DEFAULTS = { interval: 10, failures: 3, path: '/' } as const;
const LIMITS = { interval: { min: 1, max: 3600 }, failures: { min: 1, max: 100 } } as const;

const MAP_EXPECTED = 'a map such as { type: tcp, interval: 10, failures: 3 } (type tcp or http; path for http)';
const PATH_EXPECTED = 'an absolute request path such as /health (printable characters, no spaces, at most 200)';

function readInt(tree: Tree, node: unknown, field: string, limits: { min: number; max: number }): number | null {
  const v = isScalar(node) ? node.value : undefined;
  if (typeof v === 'number' && Number.isInteger(v) && v >= limits.min && v <= limits.max) return v;
  tree.error(node, field, `a whole number from ${limits.min} to ${limits.max}`, describe(node));
  return null;
}

/**
 * Reads `health_check:`. Returns null when absent; undefined when invalid (the
 * problems are in `tree`). Unknown keys are errors: a misspelt `intervall` silently
 * ignored would leave a check running at a pace nobody chose.
 */
export function readHealthCheck(tree: Tree, raw: unknown, path: string): HealthCheck | null | undefined {
  const node = tree.deref(raw);
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return null;
  if (!isMap(node)) {
    tree.error(node, path, MAP_EXPECTED, describe(node));
    return undefined;
  }
  const before = tree.errors.length;
  const values = new Map<string, unknown>();
  for (const pair of node.items) {
    const key = keyText(tree.deref(pair.key));
    if (key === null || !(HEALTH_CHECK_FIELDS as readonly string[]).includes(key)) {
      tree.error(pair.key, child(path, key ?? '?'), `one of ${HEALTH_CHECK_FIELDS.join(', ')}`, key === null ? describe(tree.deref(pair.key)) : quote(key));
    } else if (!values.has(key)) {
      values.set(key, tree.deref(pair.value));
    }
  }
  let type: HealthCheck['type'] | null = null;
  const typeNode = values.get('type');
  const typeValue = isScalar(typeNode) ? typeNode.value : undefined;
  if (typeValue === 'tcp' || typeValue === 'http') type = typeValue;
  else tree.error(typeNode ?? node, child(path, 'type'), 'tcp or http', typeNode === undefined ? 'nothing (the field is missing)' : describe(typeNode));

  const interval = values.has('interval') ? readInt(tree, values.get('interval'), child(path, 'interval'), LIMITS.interval) : HEALTH_CHECK_DEFAULTS.interval;
  const failures = values.has('failures') ? readInt(tree, values.get('failures'), child(path, 'failures'), LIMITS.failures) : HEALTH_CHECK_DEFAULTS.failures;

  let requestPath: string = HEALTH_CHECK_DEFAULTS.path;
  if (values.has('path')) {
    const p = values.get('path');
    const text = isScalar(p) && typeof p.value === 'string' ? p.value : null;
    if (type === 'tcp') tree.error(p, child(path, 'path'), 'no path for a tcp check (only http requests have one)', describe(p));
    else if (text === null || !/^\/[\x21-\x7e]{0,199}$/.test(text)) tree.error(p, child(path, 'path'), PATH_EXPECTED, describe(p));
    else requestPath = text;
  }
  if (tree.errors.length > before || type === null || interval === null || failures === null) return undefined;
  return { type, interval, failures, path: requestPath };
}
