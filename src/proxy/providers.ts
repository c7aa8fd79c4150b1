import http from 'node:http';
import https from 'node:https';
import { expandEnv, type ProxyConfig } from '../config/proxy-schema.js';
import type { Result } from '../result.js';
import { digestKey, type KeyDigest } from './auth.js';

/** One provider, ready to send requests to. */
export interface Provider {
  prefix: string;
  /** For messages and the tunnel lookup: the host and port the base URL names. */
  hostname: string;
  port: number;
  /** Request options shared by every call, minus method, path and headers. */
  target: { protocol: 'http:' | 'https:'; hostname: string; port: number; agent: http.Agent };
  /** The base URL's path without a trailing slash, e.g. `/v1`. */
  basePath: string;
  /** `Bearer <key>`, null without a key, or the variable that left the key unset. */
  authorization: Result<string | null, string>;
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

/** Keep-alive agents shared by all providers: one TCP (or TLS) handshake per upstream connection, not per request. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function createAgents(): Agents {
  // lifo reuses the most recently used socket, which the upstream is least likely to have closed.
  const options = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' as const };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

const EMPTY: ProxyConfig = { default_timeout: 600, providers: {} };

/**
 * Turns a config object into a Runtime. The result is remembered per config object,
 * so a live reload (a new object) is picked up at once and the hot path pays nothing.
 */
export function runtimeCache(
  agents: Agents,
  env: NodeJS.ProcessEnv,
  log?: (entry: Record<string, unknown>) => void,
): (config: ProxyConfig | null) => Runtime {
  const cache = new WeakMap<ProxyConfig, Runtime>();
  return (config) => {
    const c = config ?? EMPTY;
    let runtime = cache.get(c);
    if (runtime === undefined) {
      runtime = compile(c, agents, env);
      cache.set(c, runtime);
      // Said once per config, at the moment it is first used, naming the variable (never a value).
      for (const variable of runtime.unsetClientKeyVariables) {
        log?.({ event: 'proxy_unset_variable', where: 'proxy.api_keys', variable });
      }
      for (const p of runtime.providers.values()) {
        if (!p.authorization.ok) log?.({ event: 'proxy_unset_variable', where: `proxy.providers.${p.prefix}.api_key`, variable: p.authorization.error });
      }
    }
    return runtime;
  };
}

export function compile(config: ProxyConfig, agents: Agents, env: NodeJS.ProcessEnv): Runtime {
  const providers = new Map<string, Provider>();
  for (const [prefix, p] of Object.entries(config.providers)) {
    const url = new URL(p.base_url);
    const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
    const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
    // WHATWG URLs keep IPv6 brackets; sockets want the bare address.
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const seconds = p.timeout ?? config.default_timeout;
    let authorization: Result<string | null, string> = { ok: true, value: null };
    if (p.api_key !== undefined) {
      const key = expandEnv(p.api_key, env);
      authorization = key.ok ? { ok: true, value: `Bearer ${key.value}` } : { ok: false, error: key.error.variable };
    }
    providers.set(prefix, {
      prefix,
      hostname,
      port,
      target: { protocol, hostname, port, agent: protocol === 'https:' ? agents.https : agents.http },
      basePath: url.pathname.replace(/\/+$/, ''),
      authorization,
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
