import { timingSafeEqual } from 'node:crypto';
import type { ClientConfig } from '../../config/proxy-clients.js';
import { expandEnv } from '../../config/proxy-schema.js';
import { digestSecret, type SecretDigest } from '../../edge/tokens.js';

/** One client of `proxy.clients`, as the proxy checks it. */
export interface ClientRule {
  name: string;
  /** The key's digest; null when its variable is unset (the client is then never recognised). */
  digest: SecretDigest | null;
  /** The patterns as written (for messages), and as expressions; null: every model. */
  models: readonly string[] | null;
  matchers: readonly RegExp[] | null;
  rpm: number | null;
  tpm: number | null;
  maxConcurrent: number | null;
}

/** The clients of a config, compiled once per config object (with the rest of the Runtime). */
export interface ClientRules {
  list: readonly ClientRule[];
  /** Clients whose key names an unset variable (logged once, by name only). */
  unset: readonly { client: string; variable: string }[];
}

/** `*` matches any run of characters (colons and slashes included); everything else is literal. */
export function patternMatcher(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
}

export function compileClients(clients: Record<string, ClientConfig> | undefined, env: NodeJS.ProcessEnv): ClientRules | null {
  if (clients === undefined) return null;
  const list: ClientRule[] = [];
  const unset: { client: string; variable: string }[] = [];
  for (const [name, c] of Object.entries(clients)) {
    const key = expandEnv(c.key, env);
    if (!key.ok) unset.push({ client: name, variable: key.error.variable });
    list.push({
      name,
      digest: key.ok ? digestSecret(key.value.trim()) : null,
      models: c.models ?? null,
      matchers: c.models?.map(patternMatcher) ?? null,
      rpm: c.rpm ?? null,
      tpm: c.tpm ?? null,
      maxConcurrent: c.max_concurrent ?? null,
    });
  }
  return { list, unset };
}

/**
 * The client whose key `presented` is, or null. Every client's digest is compared,
 * match or not, so the time taken tells nothing of which client (or how much of a key)
 * matched.
 */
export function identify(presented: string, rules: ClientRules): ClientRule | null {
  const p = digestSecret(presented);
  let found: ClientRule | null = null;
  for (const rule of rules.list) {
    const same = rule.digest !== null && timingSafeEqual(p, rule.digest);
    if (same && found === null) found = rule;
  }
  return found;
}

/** Whether the client may use `model` (as sent), or every target it resolves to (`prefix:model`). */
export function allows(rule: ClientRule, model: string, targets: readonly { prefix: string; model: string }[]): boolean {
  const m = rule.matchers;
  if (m === null) return true;
  if (m.some((r) => r.test(model))) return true;
  return targets.length > 0 && targets.every((t) => m.some((r) => r.test(`${t.prefix}:${t.model}`)));
}

/**
 * Whether the client may use every model of provider `prefix`: one of its patterns
 * matches `<prefix>:` followed by anything. A glob does so exactly when it ends with
 * `*` and matches `<prefix>:` itself (the last `*` then takes whatever follows).
 */
export function allowsWholeProvider(rule: ClientRule, prefix: string): boolean {
  const models = rule.models;
  const m = rule.matchers;
  if (models === null || m === null) return true;
  return models.some((p, i) => p.endsWith('*') && m[i]?.test(`${prefix}:`) === true);
}
