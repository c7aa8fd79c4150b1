// `check` names every `${VAR}` of the proxy's keys that is unset (config/proxy-schema.ts expandEnv's rule).
import { describe, expect, it } from 'vitest';
import { unsetKeyVariables } from '../../../src/check/env-refs.js';
import type { ProxyConfig } from '../../../src/config/proxy-schema.js';

const proxy = (p: Partial<ProxyConfig>): ProxyConfig => ({ default_timeout: 600, providers: {}, ...p }) as ProxyConfig;

describe('unset ${VAR} in the proxy keys', () => {
  it('names each unset variable with its field, and the fix says set it and restart the daemon', () => {
    const found = unsetKeyVariables('/c.yaml', proxy({ api_keys: ['${PROXY_KEY}', 'literal', '${SET_ONE}'], providers: { gpu: { base_url: 'http://x', api_key: '${UPSTREAM_KEY}' } } as never }), { SET_ONE: 'v' });
    expect(found.map((p) => p.where)).toEqual(['/c.yaml: proxy.api_keys[0]', '/c.yaml: proxy.providers.gpu.api_key']);
    expect(found[0]!.what).toMatch(/^\$\{PROXY_KEY\} is not set \(or empty\)/);
    expect(found[1]!.what).toMatch(/^\$\{UPSTREAM_KEY\} is not set/);
    for (const p of found) expect(p.fix).toMatch(/^set \w+ in the daemon's environment .*then restart the daemon/);
  });

  it('an empty variable counts as unset; clients keys too; every variable of one field; $${X} is a literal', () => {
    const found = unsetKeyVariables('/c.yaml', proxy({ api_keys: ['${A}-${B}', '$${LITERAL}'], clients: { alice: { key: '${ALICE_KEY}' } } as never }), { A: '' });
    expect(found.map((p) => `${p.where} ${p.what.slice(0, p.what.indexOf('}') + 1)}`)).toEqual([
      '/c.yaml: proxy.api_keys[0] ${A}',
      '/c.yaml: proxy.api_keys[0] ${B}',
      '/c.yaml: proxy.clients.alice.key ${ALICE_KEY}',
    ]);
  });

  it('nothing when every variable is set, or there is no proxy section; a value is never shown', () => {
    expect(unsetKeyVariables('/c.yaml', proxy({ api_keys: ['${K}'] }), { K: 'secret-value' })).toEqual([]);
    expect(unsetKeyVariables('/c.yaml', null, {})).toEqual([]);
    const shown = JSON.stringify(unsetKeyVariables('/c.yaml', proxy({ api_keys: ['${K}', '${M}'] }), { K: 'secret-value' }));
    expect(shown).not.toContain('secret-value');
  });
});
