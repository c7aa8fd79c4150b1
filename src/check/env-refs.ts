import { expandEnv, type ProxyConfig } from '../config/proxy-schema.js';
import type { CheckProblem } from './report.js';

/**
 * `${VAR}` in the proxy's keys whose variable is unset or empty (SPEC §9): the daemon
 * reads them from its environment when it starts, so an unset one makes every /v1
 * request a 503 (api_keys, clients) or a provider's calls fail (api_key) until the
 * variable is set and the daemon restarted. Named here, never their values.
 */
export function unsetKeyVariables(configPath: string, proxy: ProxyConfig | null, env: Record<string, string | undefined>): CheckProblem[] {
  if (proxy === null) return [];
  const fields: Array<[string, string]> = [];
  (proxy.api_keys ?? []).forEach((k, i) => fields.push([`proxy.api_keys[${i}]`, k]));
  for (const [name, c] of Object.entries(proxy.clients ?? {})) fields.push([`proxy.clients.${name}.key`, c.key]);
  for (const [prefix, p] of Object.entries(proxy.providers)) if (p.api_key !== undefined) fields.push([`proxy.providers.${prefix}.api_key`, p.api_key]);
  const out: CheckProblem[] = [];
  for (const [field, text] of fields) {
    // Every variable of the field, not only the first: expandEnv stops at one.
    for (const name of variablesOf(text)) {
      const one = expandEnv(`\${${name}}`, env);
      if (one.ok) continue;
      out.push({
        where: `${configPath}: ${field}`,
        what: `\${${name}} is not set (or empty) in this environment; the daemon reads it when it starts, and without it ${field.startsWith('proxy.providers.') ? 'the provider gets no key' : 'the key matches nothing (every /v1 request is refused while no key is usable)'}`,
        fix: `set ${name} in the daemon's environment (compose: environment: or .env; systemd: Environment=), then restart the daemon: a running daemon does not read its environment again`,
      });
    }
  }
  return out;
}

/** The names in `${NAME}` references of `text`; `$${NAME}` is a literal. */
function variablesOf(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) if (m[1] === undefined && m[2] !== undefined && !names.includes(m[2])) names.push(m[2]);
  return names;
}
