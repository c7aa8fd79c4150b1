import { isMap, isScalar, isSeq } from 'yaml';
import { providerSchema, proxySchema, type ProxyConfig } from './proxy-schema.js';
import { child, describe, keyText, quote, type Tree } from './tree.js';

const PROXY_KEYS = Object.keys(proxySchema.shape);
const PROVIDER_KEYS = Object.keys(providerSchema.shape);
const SECRET_KEYS = new Set(['api_key', 'api_keys', 'key']);

/**
 * Reads the `proxy:` section with its zod schema, and maps each zod issue back to
 * the YAML node it is about, so the message has a line and column like every other.
 * A missing or empty section means no proxy configuration (null).
 */
export function readProxy(tree: Tree, raw: unknown, value: unknown, tunnelNames?: readonly string[]): ProxyConfig | null {
  const node = tree.deref(raw);
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return null;
  warnUnknownKeys(tree, node);
  const parsed = proxySchema.safeParse(value);
  if (parsed.success) {
    if (tunnelNames !== undefined) warnUnknownTunnels(tree, node, parsed.data, tunnelNames);
    return parsed.data;
  }
  for (const issue of parsed.error.issues) {
    const target = locate(tree, node, issue.path, issue.code === 'invalid_key');
    const field = issue.path.reduce<string>((p, seg) => (typeof seg === 'number' ? `${p}[${seg}]` : child(p, String(seg))), 'proxy');
    const secret = issue.path.some((seg) => SECRET_KEYS.has(String(seg)));
    const url = String(issue.path[issue.path.length - 1]) === 'base_url' && isScalar(target.node) && typeof target.node.value === 'string';
    const found = !target.complete
      ? 'nothing (the field is missing)'
      : url
        ? quote(withoutCredentials((target.node as { value: string }).value))
        : describe(target.node, { secret });
    tree.error(target.node, field, expectedOf(issue.message), issue.code === 'invalid_key' ? quote(String(issue.path[issue.path.length - 1])) : found);
  }
  return null;
}

/**
 * A URL as written, minus the parts that can carry a credential (`user:password@`,
 * the query): problems are shown by /health, which needs no token.
 */
function withoutCredentials(url: string): string {
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/, '$1(credentials not shown)@').replace(/\?[^#]*/, '?(query not shown)');
}

/** zod's own messages read "Invalid input: expected number, received string"; keep the expectation. */
function expectedOf(message: string): string {
  const own = /^expected (.*)$/s.exec(message);
  if (own) return own[1] ?? message;
  const zods = /expected ([^,]+), received/.exec(message);
  return zods?.[1] ?? message;
}

/**
 * The node at `path` under the section, or the deepest node that exists (a missing
 * field points at the map that should hold it). `atKey` points at the key itself.
 */
function locate(tree: Tree, root: unknown, path: readonly PropertyKey[], atKey: boolean): { node: unknown; complete: boolean } {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(tree.deref(p.key)) === String(seg));
      if (!pair) return { node, complete: false };
      if (last && atKey) return { node: pair.key, complete: true };
      node = tree.deref(pair.value) ?? pair.key;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) return { node, complete: false };
      node = tree.deref(item);
    } else {
      return { node, complete: false };
    }
  }
  return { node, complete: true };
}

/** Keys the proxy does not know are kept (the panel writes them back) and named in a warning. */
function warnUnknownKeys(tree: Tree, node: unknown): void {
  if (!isMap(node)) return;
  for (const pair of node.items) {
    const key = keyText(tree.deref(pair.key));
    if (key === null) continue;
    if (!PROXY_KEYS.includes(key)) {
      tree.warn(pair.key, child('proxy', key), `one of ${PROXY_KEYS.join(', ')}`, `${quote(key)}, an unknown key (kept as written, not used)`);
    } else if (key === 'providers') {
      const providers = tree.deref(pair.value);
      if (!isMap(providers)) continue;
      for (const p of providers.items) {
        const prefix = keyText(tree.deref(p.key));
        const provider = tree.deref(p.value);
        if (prefix === null || !isMap(provider)) continue;
        for (const q of provider.items) {
          const k = keyText(tree.deref(q.key));
          if (k === null || PROVIDER_KEYS.includes(k)) continue;
          tree.warn(q.key, child(child('proxy.providers', prefix), k), `one of ${PROVIDER_KEYS.join(', ')}`, `${quote(k)}, an unknown key (kept as written, not used)`);
        }
      }
    }
  }
}

/**
 * A provider bound to a tunnel the file does not have is kept (the tunnel may be
 * added later, and it is looked up by name on every request) but said at once.
 */
function warnUnknownTunnels(tree: Tree, node: unknown, config: ProxyConfig, tunnelNames: readonly string[]): void {
  for (const [prefix, p] of Object.entries(config.providers)) {
    if (p.tunnel === undefined || tunnelNames.includes(p.tunnel)) continue;
    const at = locate(tree, node, ['providers', prefix, 'tunnel'], false);
    const names = tunnelNames.length === 0 ? 'the file has no tunnels' : `tunnels: ${tunnelNames.join(', ')}`;
    tree.warn(at.node, `proxy.providers.${prefix}.tunnel`, `the name of a tunnel of this file (${names})`, `${quote(p.tunnel)}; requests to "${prefix}" are refused until such a tunnel exists`);
  }
}
