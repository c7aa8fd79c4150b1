import { keyOf, type KeyProblem, type Provider } from '../relay/provider.js';
import { forwardedNames } from '../relay/upstream-headers.js';
import { expandEnv, type ProviderFormat, type ProxyConfig } from '../../config/proxy-schema.js';
import type { Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { digestKey, type KeyDigest } from '../clients/api-keys.js';
import { compileClients, type ClientRules } from '../clients/rules.js';
import { DEFAULT_KEEP_ALIVE_MS } from '../relay/upstream.js';

/** Where a provider is: a fixed URL, or the local end of a tunnel, looked up on every request so that it follows edits. */
export type ProviderEntry = (
  | { kind: 'url'; prefix: string; formats: readonly ProviderFormat[]; provider: Provider }
  | { kind: 'tunnel'; prefix: string; formats: readonly ProviderFormat[]; tunnel: string; path: string; at(host: string, port: number): Provider }
) & {
  /** `responses: chat`: it has no Responses API, so /v1/responses reaches it translated to chat (translate/). */
  responsesViaChat?: boolean;
};

/** One target of a model name: a provider and the bare model it gets. */
export interface Target {
  prefix: string;
  model: string;
}

/** The config as the proxy uses it: keys expanded and hashed, URLs split. */
export interface Runtime {
  providers: Map<string, ProviderEntry>;
  /** Alias → targets, tried in order. */
  aliases: Map<string, Target[]>;
  defaultProvider: string | null;
  /** Null: no CORS at all. */
  corsOrigins: readonly string[] | null;
  /** `max_body_mib` in bytes: the largest body of any /v1 request; null: each endpoint's default. */
  maxBodyBytes: number | null;
  /** The client headers passed on to providers: the built-in ones and `proxy.forward_headers` (see relay/upstream-headers.ts). */
  forwarded: readonly string[];
  /** Null when `api_keys` is absent (the group is open); the digests of the keys that expanded otherwise. */
  clientKeys: KeyDigest[] | null;
  /** Variables named in `api_keys` that are unset: those entries match nothing. */
  unsetClientKeyVariables: string[];
  /** `proxy.clients`: a key per client with its models and limits; null when absent. */
  clients: ClientRules | null;
}

const EMPTY: ProxyConfig = { default_timeout: 600, providers: {} };
const DEFAULT_FORMATS: readonly ProviderFormat[] = ['openai'];

// Visible ASCII, space and tab: what a header value written as latin1 can carry safely.
const HEADER_SAFE = /^[\t\x20-\x7e]+$/;

/** The 500 for a provider whose key cannot be used, or null when it can. */
export function keyRefusal(p: Provider): ProxyError | null {
  if (p.key.ok) return null;
  const code = p.key.error.reason === 'unset_variable' ? 'provider_key_unset' : 'provider_key_unusable';
  return { status: 500, type: 'server_error', code, message: describeKeyProblem(p.prefix, p.key.error) };
}

/** Says what is wrong with a provider key, naming the variable (never a value). */
export function describeKeyProblem(prefix: string, problem: KeyProblem): string {
  if (problem.reason === 'unset_variable') return `provider "${prefix}" has api_key \${${problem.variable}}, and that environment variable is not set, or empty, on the server`;
  return problem.reason === 'blank'
    ? `provider "${prefix}" has an api_key that is only white space`
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
      for (const u of runtime.clients?.unset ?? []) log?.({ event: 'proxy_unset_variable', where: `proxy.clients.${u.client}.key`, variable: u.variable });
      for (const entry of runtime.providers.values()) {
        const p = entry.kind === 'url' ? entry.provider : entry.at('127.0.0.1', 0);
        if (p.key.ok) continue;
        const where = `proxy.providers.${p.prefix}.api_key`;
        if (p.key.error.reason === 'unset_variable') log?.({ event: 'proxy_unset_variable', where, variable: p.key.error.variable });
        else log?.({ event: 'proxy_unusable_key', where, problem: p.key.error.reason });
      }
    }
    return runtime;
  };
}

export function compile(config: ProxyConfig, env: NodeJS.ProcessEnv): Runtime {
  const providers = new Map<string, ProviderEntry>();
  for (const [prefix, p] of Object.entries(config.providers)) {
    const seconds = p.timeout ?? config.default_timeout;
    let key: Result<string | null, KeyProblem> = { ok: true, value: null };
    if (p.api_key !== undefined) {
      const expanded = expandEnv(p.api_key, env);
      // Trimmed as a header value is (RFC 9110 §5.5): the provider reads, and may echo, the key without its surrounding white space.
      const value = expanded.ok ? expanded.value.trim() : '';
      if (!expanded.ok) key = { ok: false, error: { reason: 'unset_variable', variable: expanded.error.variable } };
      else if (!HEADER_SAFE.test(expanded.value)) key = { ok: false, error: { reason: 'not_header_safe' } };
      else if (value === '') key = { ok: false, error: { reason: 'blank' } };
      else key = { ok: true, value };
    }
    const usable = keyOf({ key });
    const formats = p.format === undefined ? DEFAULT_FORMATS : typeof p.format === 'string' ? [p.format] : [...new Set(p.format)];
    const common = {
      prefix,
      formats,
      key,
      credential: usable === null ? null : ({ name: 'authorization', value: `Bearer ${usable}` } as const),
      timeoutMs: Math.round(seconds * 1000),
      timeoutSeconds: seconds,
      keepAliveMs: p.keep_alive === undefined ? DEFAULT_KEEP_ALIVE_MS : Math.round(p.keep_alive * 1000),
    };
    if (p.tunnel !== undefined) {
      const basePath = (p.path ?? '/v1').replace(/\/+$/, '');
      providers.set(prefix, {
        kind: 'tunnel',
        prefix,
        formats,
        responsesViaChat: p.responses === 'chat',
        tunnel: p.tunnel,
        path: basePath,
        at: (host, port) => ({ ...common, ...place('http:', host, port), basePath }),
      });
    } else {
      const url = new URL(p.base_url ?? '');
      const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
      const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
      // WHATWG URLs keep IPv6 brackets; sockets want the bare address.
      const provider: Provider = { ...common, ...place(protocol, url.hostname.replace(/^\[(.*)\]$/, '$1'), port, url.host), basePath: url.pathname.replace(/\/+$/, '') };
      providers.set(prefix, { kind: 'url', prefix, formats, provider, responsesViaChat: p.responses === 'chat' });
    }
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
  const aliases = new Map<string, Target[]>();
  for (const [name, targets] of Object.entries(config.aliases ?? {})) {
    const list = typeof targets === 'string' ? [targets] : targets;
    aliases.set(
      name,
      list.map((t) => ({ prefix: t.slice(0, t.indexOf(':')), model: t.slice(t.indexOf(':') + 1) })),
    );
  }
  return {
    providers,
    aliases,
    defaultProvider: config.default_provider ?? null,
    corsOrigins: config.cors_origins ?? null,
    maxBodyBytes: config.max_body_mib === undefined ? null : config.max_body_mib * 1024 * 1024,
    forwarded: forwardedNames(config.forward_headers ?? []),
    clientKeys,
    unsetClientKeyVariables,
    clients: compileClients(config.clients, env),
  };
}

function place(protocol: 'http:' | 'https:', hostname: string, port: number, host = hostname.includes(':') ? `[${hostname}]:${port}` : `${hostname}:${port}`): Pick<Provider, 'hostname' | 'port' | 'origin'> {
  return { hostname, port, origin: { protocol, hostname, port, host, url: `${protocol}//${host}` } };
}

/** The provider as a request of `format` reaches it: Anthropic's API takes its key as `x-api-key`. */
export function withCredentialFor(p: Provider, format: ProviderFormat): Provider {
  const key = keyOf(p);
  if (format !== 'anthropic' || p.credential === null || key === null) return p;
  return { ...p, credential: { name: 'x-api-key', value: key } };
}
