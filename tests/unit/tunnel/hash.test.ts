import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { tunnelHash } from '../../../src/tunnel/hash.js';
import { valid } from '../config/helpers.js';

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

describe('tunnelHash, the reference implementation\'s identity', () => {
  const fields = { name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local', interactive: 'false' };

  test('is md5 of name|remote_host|remote_port|local_port|direction|interactive in lower-case hex', () => {
    expect(tunnelHash(fields)).toBe(md5('db|user@bastion|5432|127.0.0.1:15432|remote_to_local|false'));
  });

  test('equals the value computed with md5sum', () => {
    // printf '%s' 'db|user@bastion|5432|127.0.0.1:15432|remote_to_local|false' | md5sum
    expect(tunnelHash(fields)).toBe('e0bf7ece779107669cd6206f94fbd9f2');
    // printf '%s' 'unnamed|bastion|8080|3000|local_to_remote|true' | md5sum
    expect(tunnelHash({ name: 'unnamed', remote_host: 'bastion', remote_port: '8080', local_port: '3000', direction: 'local_to_remote', interactive: 'true' })).toBe(
      '2628ee509f29859e1ea221b859407a07',
    );
  });

  test('every field takes part', () => {
    const base = tunnelHash(fields);
    expect(tunnelHash({ ...fields, name: 'db2' })).not.toBe(base);
    expect(tunnelHash({ ...fields, remote_host: 'bastion' })).not.toBe(base);
    expect(tunnelHash({ ...fields, remote_port: '5433' })).not.toBe(base);
    expect(tunnelHash({ ...fields, local_port: '15432' })).not.toBe(base);
    expect(tunnelHash({ ...fields, direction: 'local_to_remote' })).not.toBe(base);
    expect(tunnelHash({ ...fields, interactive: 'true' })).not.toBe(base);
  });

  test('non-ASCII names are hashed as UTF-8, like the shell does', () => {
    expect(tunnelHash({ ...fields, name: 'données' })).toBe(md5('données|user@bastion|5432|127.0.0.1:15432|remote_to_local|false'));
  });

  test('the loader hashes the values as written: defaults filled, quotes removed, ports as text', () => {
    const { config } = valid(`tunnels:
  - remote_host: 'bastion'
    remote_port: 8080
    local_port: "3000"
    direction: local_to_remote
    interactive: true
`);
    expect(config.tunnels[0]!.hash).toBe('2628ee509f29859e1ea221b859407a07');
  });

  test('interactive and name are hashed as written, as the reference reads them', () => {
    const cases: [string, string][] = [
      ['interactive: True', 'db|bastion|1|2|remote_to_local|True'],
      ['interactive: "yes"', 'db|bastion|1|2|remote_to_local|yes'],
      ['interactive: NO', 'db|bastion|1|2|remote_to_local|NO'],
      ['interactive: false', 'db|bastion|1|2|remote_to_local|false'],
    ];
    for (const [line, input] of cases) {
      const { config } = valid(`tunnels:\n  - name: db\n    remote_host: bastion\n    remote_port: 1\n    local_port: 2\n    ${line}\n`);
      expect(config.tunnels[0]!.hash, line).toBe(md5(input));
    }
  });
});
