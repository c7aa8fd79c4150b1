// The optional per-tunnel health_check (SPEC §5).
import { describe, expect, it } from 'vitest';
import { oneTunnel, problems, valid } from './helpers.js';

const withCheck = (yaml: string) => `${oneTunnel({})}    health_check: ${yaml}\n`;

describe('health_check', () => {
  it('is absent unless written', () => {
    expect(valid(oneTunnel({})).config.tunnels[0]!.health_check).toBeUndefined();
  });

  it('takes tcp and http with defaults for interval, failures and path', () => {
    expect(valid(withCheck('{ type: tcp }')).config.tunnels[0]!.health_check).toEqual({ type: 'tcp', interval: 10, failures: 3, path: '/' });
    expect(valid(withCheck('{ type: http, interval: 2, failures: 1, path: /healthz }')).config.tunnels[0]!.health_check).toEqual({ type: 'http', interval: 2, failures: 1, path: '/healthz' });
  });

  it.each([
    ['{ type: ping }', 'tunnels[0].health_check.type', 'tcp or http', '"ping"'],
    ['{ interval: 5 }', 'tunnels[0].health_check.type', 'tcp or http', 'nothing (the field is missing)'],
    ['{ type: tcp, interval: 0 }', 'tunnels[0].health_check.interval', 'a whole number from 1 to 3600', '"0"'],
    ['{ type: tcp, failures: 2.5 }', 'tunnels[0].health_check.failures', 'a whole number from 1 to 100', '"2.5"'],
    ['{ type: tcp, intervall: 5 }', 'tunnels[0].health_check.intervall', 'one of type, interval, failures, path', '"intervall"'],
    ['{ type: tcp, path: /x }', 'tunnels[0].health_check.path', 'no path for a tcp check (only http requests have one)', '"/x"'],
    ['{ type: http, path: "no slash" }', 'tunnels[0].health_check.path', expect.stringContaining('absolute request path'), '"no slash"'],
    ['tcp', 'tunnels[0].health_check', expect.stringContaining('a map such as'), '"tcp"'],
  ])('%s is refused with where, what was expected and what was found', (yaml, field, expected, found) => {
    const [p] = problems(withCheck(yaml));
    expect(p).toMatchObject({ field, expected, found });
    expect(p!.line).toBeGreaterThan(0);
  });
});
