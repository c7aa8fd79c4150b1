// The page words each problem of the config file by a code. The codes come from the
// daemon's own validation of real files, one for each rule a form field can break, so
// a change of the validator's wording that would leave a problem uncoded fails here.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/parse.js';
import { codeProblem } from '../../../src/panel/problem-codes.js';

const entry = (fields: Record<string, string>) =>
  '  - ' + Object.entries({ name: 'a', remote_host: 'bastion', remote_port: '80', local_port: '18080', ...fields })
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n    ') + '\n';

function codes(yaml: string) {
  const r = parseConfigText(yaml);
  if (r.kind === 'ok' || r.kind === 'missing') throw new Error(`no problem in:\n${yaml}`);
  return r.problems.map(codeProblem).map((p) => ({ code: p.code, field: p.field, params: p.params }));
}

describe('problems of the config file, coded for the page', () => {
  it.each([
    ['missing_field', entry({ remote_host: '' }), {}],
    ['invalid_port', entry({ local_port: '70000' }), { found: '"70000"' }],
    ['invalid_port', entry({ remote_port: '"host:"' }), { found: '"host:"' }],
    ['invalid_remote_host', entry({ remote_host: '"-oProxyCommand=x"' }), {}],
    ['invalid_direction', entry({ direction: 'sideways' }), { found: '"sideways"' }],
    ['invalid_name', entry({ name: `"${'n'.repeat(200)}"` }), { max: '128' }],
    ['out_of_range', entry({ health_check: '{ type: tcp, interval: 0 }' }), { min: '1', max: '3600', found: '"0"' }],
    ['invalid_check_type', entry({ health_check: '{ type: udp }' }), {}],
    ['invalid_check_path', entry({ health_check: '{ type: http, path: health }' }), {}],
  ])('%s', (code, yaml, params) => {
    const found = codes(`tunnels:\n${yaml}`);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ code, params });
  });

  it('port_in_use and duplicate_tunnel, on the later of two entries', () => {
    expect(codes(`tunnels:\n${entry({ name: 'a' })}${entry({ name: 'b', remote_port: '81' })}`)).toMatchObject([{ code: 'port_in_use', field: 'tunnels[1].local_port' }]);
    expect(codes(`tunnels:\n${entry({})}${entry({})}`)).toMatchObject([{ code: 'duplicate_tunnel', field: 'tunnels[1]' }]);
  });

  it('any other rule keeps the daemon\'s expectation in a worded frame', () => {
    const [p] = codes(`tunnels:\n${entry({ ssh_options: '{ ProxyCommand: x }' })}`);
    expect(p).toMatchObject({ code: 'invalid_value' });
    expect(p!.params.expected).toMatch(/one of/);
  });
});
