import { describe, expect, it } from 'vitest';
import { accountRefusal, trusted, type AccountGate } from '../../../src/edge/account-gate.js';
import { readAllowedAccounts, NO_OTHER_ACCOUNT } from '../../../src/edge/account-names.js';
import { apiTokenCredential, daemonGuards, proxyHasKeys, proxyKeysCredential } from '../../../src/edge/credentials.js';
import { serverTrustProblem } from '../../../src/edge/trusted-connect.js';

const OWNER = 1000;
const gate = (api: boolean, proxy: boolean, allowed = NO_OTHER_ACCOUNT): AccountGate => ({
  ownUid: OWNER,
  allowed,
  what: 'this daemon',
  guardsOf: daemonGuards(apiTokenCredential(api ? ['t'] : null), proxyKeysCredential(() => proxy)),
});
const account = (uid: number) => ({ kind: 'account' as const, uid });

describe('the identity rule', () => {
  it('lets the owner, root and named accounts in without a credential; a network peer is left to the other rules', () => {
    const g = gate(false, false, { kind: 'some', uids: new Set([1002]) });
    expect(trusted(account(OWNER), g)).toBe(true);
    expect(trusted(account(0), g)).toBe(true);
    expect(trusted(account(1002), g)).toBe(true);
    expect(trusted(account(1001), g)).toBe(false);
    expect(trusted({ kind: 'network' }, g)).toBe(true);
    expect(trusted({ kind: 'unknown', why: 'x' }, g)).toBe(false);
    expect(trusted({ kind: 'unknown', why: 'x' }, gate(false, false, { kind: 'any' }))).toBe(true);
  });

  it('refuses another account each route group whose credential is unset, and leaves it to a set one', () => {
    const none = gate(false, false);
    for (const path of ['/status', '/stop', '/events', '/metrics', '/auth/abcd', '/v1/models', '/v1/responses/x', '/v1']) {
      expect(accountRefusal(account(1001), path, none)?.code).toBe('account_not_allowed');
    }
    expect(accountRefusal(account(1001), '/health', none)).toBeNull();
    const api = gate(true, false);
    expect(accountRefusal(account(1001), '/status', api)).toBeNull();
    expect(accountRefusal(account(1001), '/v1/models', api)?.message).toContain('proxy.api_keys');
    const proxy = gate(false, true);
    expect(accountRefusal(account(1001), '/v1/chat/completions', proxy)).toBeNull();
    expect(accountRefusal(account(1001), '/v1/models/gpu1:llama3:8b', proxy)).toBeNull();
    expect(accountRefusal(account(1001), '/list', proxy)?.message).toContain('TUNNEL_API_TOKEN');
  });

  it('asks every credential of a path the router could read as either group', () => {
    for (const path of ['/%761/models', '/list/../v1/models', '/v1/../status', '//v1/models', '/v1\\models', '/./status']) {
      expect(accountRefusal(account(1001), path, gate(true, false))?.message, path).toContain('proxy.api_keys');
      expect(accountRefusal(account(1001), path, gate(false, true))?.message, path).toContain('TUNNEL_API_TOKEN');
      expect(accountRefusal(account(1001), path, gate(true, true)), path).toBeNull();
    }
  });

  it('reads TUNNEL_API_ALLOWED_USERS: uids, names, "*", and says which name is no account', () => {
    const lookup = (k: string) => (k === 'alice' ? { name: 'alice', uid: 1005 } : null);
    const problems: string[] = [];
    const a = readAllowedAccounts('alice, 1007', lookup, problems);
    expect(a).toEqual({ kind: 'some', uids: new Set([1005, 1007]) });
    expect(readAllowedAccounts('*', lookup, problems)).toEqual({ kind: 'any' });
    expect(problems).toEqual([]);
    readAllowedAccounts('bob,-rf', lookup, problems);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain('"bob"');
  });

  it('knows when a proxy section has keys', () => {
    expect(proxyHasKeys(undefined)).toBe(false);
    expect(proxyHasKeys({ api_keys: [] })).toBe(false);
    expect(proxyHasKeys({ api_keys: ['k'] })).toBe(true);
    expect(proxyHasKeys({ clients: { a: {} } })).toBe(true);
  });

  it("trusts a server of the user's or root's, one on the network, and not another account's", () => {
    expect(serverTrustProblem(account(OWNER), OWNER, 'x')).toBeNull();
    expect(serverTrustProblem(account(0), OWNER, 'x')).toBeNull();
    expect(serverTrustProblem({ kind: 'network' }, OWNER, 'x')).toBeNull();
    expect(serverTrustProblem(account(1001), OWNER, '127.0.0.1:8080')).toContain('runs as uid 1001');
    expect(serverTrustProblem({ kind: 'unknown', why: 'not listed' }, OWNER, 'x')).toContain('not listed');
    expect(serverTrustProblem({ kind: 'unknown', why: 'no /proc', unsupported: true }, OWNER, 'x')).toBeNull();
  });
});
