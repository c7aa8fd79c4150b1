import { expandEnv, type ProxyConfig } from '../config/proxy-schema.js';
import type { Result } from '../result.js';
import { digestKey, type KeyDigest } from './auth.js';
import type { Origin } from './upstream.js';

/** Why a provider's `api_key` cannot be sent. */
export type KeyProblem =
  | { reason: 'unset_variable'; variable: string }
  /** The expanded key holds a line break or another character an HTTP header cannot carry. */
  | { reason: 'not_header_safe' };

/** One provider, ready to send requests to. */
export interface Provider {
  prefix: string;
  /** For messages and the tunnel lookup: the host and port the base URL names. */
  hostname: string;
  port: number;
  origin: Origin;
  /** The base URL's path without a trailing slash, e.g. `/v1`. */
  basePath: string;
  /** The upstream key (null: none), or why it cannot be used. */
  key: Result<string | null, KeyProblem>;
  /** `Bearer <key>` for the authorization header, or null without a key. */
  authorization: string | null;
  timeoutMs: number;
  timeoutSeconds: number;
}

/** The config as the proxy uses it: keys expanded and hashed, URLs split. */
export interface Runtime {
  providers: Map<string, Provider>;
  /** Null when `api_keys` is absent (the group is open); the digests of the keys that expanded otherwise. */
  clientKeys: KeyDigest[] | null;
  /** Variables named in `api_keys` that are unset: those entries match nothing. */
  unsetClientKeyVariables: string[];
}

const EMPTY: ProxyConfig = { default_timeout: 600, providers: {} };

// Visible ASCII, space and tab: what a header value written as latin1 can carry safely.
const HEADER_SAFE = /^[\t\x20-\x7e]+$/;

/** Says what is wrong with a provider key, naming the variable (never a value). */
export function describeKeyProblem(prefix: string, problem: KeyProblem): string {
  return problem.reason === 'unset_variable'
    ? `provider "${prefix}" has api_key \${${problem.variable}}, and that environment variable is not set on the server`
    : `provider "${prefix}" has an api_key with a line break or another character an HTTP header cannot carry`;
}

/**
 * Turns a config object into a Runtime. The result is remembered per config object,
 * so a live reload (a new object) is picked up at once and the hot path pays nothing.
 */
export function runtimeCache(env: NodeJS.ProcessEnv, log?: (entry: Record<string, unknown>) => void): (config: ProxyConfig | null) => Runtime {
  const cache = new WeakMap<ProxyConfig, Runtime>();
  return (config) => {
    const c = config ?? EMPTY;
    let runtime = cache.get(c);
    if (runtime === undefined) {
      runtime = compile(c, env);
      cache.set(c, runtime);
      // Said once per config, at the moment it is first used, naming the variable (never a value).
      for (const variable of runtime.unsetClientKeyVariables) {
        log?.({ event: 'proxy_unset_variable', where: 'proxy.api_keys', variable });
      }
      for (const p of runtime.providers.values()) {
        if (p.key.ok) continue;
        const where = `proxy.providers.${p.prefix}.api_key`;
        if (p.key.error.reason === 'unset_variable') log?.({ event: 'proxy_unset_variable', where, variable: p.key.error.variable });
        else log?.({ event: 'proxy_unusable_key', where, problem: 'not_header_safe' });
      }
    }
    return runtime;
  };
}

export function compile(config: ProxyConfig, env: NodeJS.ProcessEnv): Runtime {
  const providers = new Map<string, Provider>();
  for (const [prefix, p] of Object.entries(config.providers)) {
    const url = new URL(p.base_url);
    const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
    const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
    // WHATWG URLs keep IPv6 brackets; sockets want the bare address.
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const seconds = p.timeout ?? config.default_timeout;
    let key: Result<string | null, KeyProblem> = { ok: true, value: null };
    if (p.api_key !== undefined) {
      const expanded = expandEnv(p.api_key, env);
      if (!expanded.ok) key = { ok: false, error: { reason: 'unset_variable', variable: expanded.error.variable } };
      else if (!HEADER_SAFE.test(expanded.value)) key = { ok: false, error: { reason: 'not_header_safe' } };
      else key = { ok: true, value: expanded.value };
    }
    providers.set(prefix, {
      prefix,
      hostname,
      port,
      origin: { protocol, hostname, port, host: url.host },
      basePath: url.pathname.replace(/\/+$/, ''),
      key,
      authorization: key.ok && key.value !== null ? `Bearer ${key.value}` : null,
      timeoutMs: Math.round(seconds * 1000),
      timeoutSeconds: seconds,
    });
  }
  let clientKeys: KeyDigest[] | null = null;
  const unsetClientKeyVariables: string[] = [];
  if (config.api_keys !== undefined) {
    clientKeys = [];
    for (const entry of config.api_keys) {
      const key = expandEnv(entry, env);
      if (key.ok) clientKeys.push(digestKey(key.value));
      else unsetClientKeyVariables.push(key.error.variable);
    }
  }
  return { providers, clientKeys, unsetClientKeyVariables };
}
