import { describe, expect, test } from 'vitest';
import { parseEndpoint, sshAddress } from '../../../src/tunnel/endpoint.js';

describe('parseEndpoint', () => {
  test.each([
    ['22', null, 22],
    ['1', null, 1],
    ['65535', null, 65535],
    ['127.0.0.1:8080', '127.0.0.1', 8080],
    ['0.0.0.0:80', '0.0.0.0', 80],
    ['[::1]:8080', '::1', 8080],
    ['[fe80::1%eth0]:22', 'fe80::1%eth0', 22],
    ['[::ffff:10.0.0.1]:22', '::ffff:10.0.0.1', 22],
    ['localhost:5432', 'localhost', 5432],
    ['db-1.example.com:5432', 'db-1.example.com', 5432],
  ])('%s → host %s, port %i, text kept', (text, host, port) => {
    expect(parseEndpoint(text)).toEqual({ ok: true, value: { host, port, text } });
  });

  test.each(['', '0', '-1', '65536', '99999', '1.2.3.4:', ':80', '[::1]', '[::1]:', '::1:80', '[1:2:3]:80', '[zz::1]:80', '1.2.3:80', '256.0.0.1:80', '-L1', '-L1:h:2', 'host name:80', 'a_b:80', '-host:80', 'h:0', 'h:65536', 'h:8080 ', ' 80', '80\n'])(
    '%j is refused',
    (text) => {
      expect(parseEndpoint(text).ok).toBe(false);
    },
  );
});

test('sshAddress brackets IPv6 only', () => {
  expect(sshAddress('::1')).toBe('[::1]');
  expect(sshAddress('10.0.0.1')).toBe('10.0.0.1');
  expect(sshAddress('db.internal')).toBe('db.internal');
});
