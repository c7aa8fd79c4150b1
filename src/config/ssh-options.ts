import { err, ok, type Result } from '../kernel/result.js';

type Check = (v: string) => boolean;
const yesNo: Check = (v) => v === 'yes' || v === 'no';
const uint = (max: number): Check => (v) => /^\d{1,6}$/.test(v) && Number(v) <= max;
const token: Check = (v) => /^[A-Za-z0-9@._+,:/=-]{1,512}$/.test(v) && !v.startsWith('-');
const oneOf = (...vals: string[]): Check => (v) => vals.includes(v);

/**
 * The ssh options a config file may set. Everything here only tunes a connection;
 * nothing can run a program (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec,
 * PermitLocalCommand stay out), so a panel that writes this file cannot be used to
 * run commands. Host key checking can be made stricter, never turned off.
 */
const ALLOWED: Record<string, { check: Check; expected: string }> = {
  ServerAliveInterval: { check: uint(86400), expected: 'seconds (0-86400)' },
  ServerAliveCountMax: { check: uint(1000), expected: 'a count (0-1000)' },
  ConnectTimeout: { check: uint(3600), expected: 'seconds (0-3600)' },
  ConnectionAttempts: { check: uint(100), expected: 'a count (1-100)' },
  TCPKeepAlive: { check: yesNo, expected: 'yes or no' },
  Compression: { check: yesNo, expected: 'yes or no' },
  ExitOnForwardFailure: { check: oneOf('yes'), expected: 'yes (the daemon relies on it to report a failed forward)' },
  IdentitiesOnly: { check: yesNo, expected: 'yes or no' },
  IdentityFile: { check: token, expected: 'a key file path without spaces' },
  StrictHostKeyChecking: { check: oneOf('yes', 'accept-new'), expected: 'yes or accept-new (host key checking is never turned off)' },
  CheckHostIP: { check: yesNo, expected: 'yes or no' },
  HostKeyAlias: { check: token, expected: 'a host name' },
  UpdateHostKeys: { check: oneOf('yes', 'no', 'ask'), expected: 'yes, no or ask' },
  AddressFamily: { check: oneOf('any', 'inet', 'inet6'), expected: 'any, inet or inet6' },
  Port: { check: (v) => uint(65535)(v) && Number(v) >= 1, expected: 'a port 1-65535' },
  User: { check: (v) => /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/.test(v), expected: 'a user name' },
  Ciphers: { check: token, expected: 'a cipher list' },
  MACs: { check: token, expected: 'a MAC list' },
  KexAlgorithms: { check: token, expected: 'a key exchange list' },
  HostKeyAlgorithms: { check: token, expected: 'a host key algorithm list' },
  PubkeyAcceptedAlgorithms: { check: token, expected: 'an algorithm list' },
  PreferredAuthentications: { check: token, expected: 'an authentication list' },
  RekeyLimit: { check: (v) => /^[0-9]+[KMG]?( [0-9]+[smhdw]?)?$/.test(v), expected: 'a rekey limit such as 1G 1h' },
  IPQoS: { check: (v) => /^[a-z0-9]{1,8}( [a-z0-9]{1,8})?$/.test(v), expected: 'an IPQoS value' },
  GatewayPorts: { check: yesNo, expected: 'yes or no' },
  BindAddress: { check: token, expected: 'a local address' },
  BindInterface: { check: token, expected: 'an interface name' },
};

const BY_LOWER = new Map(Object.keys(ALLOWED).map((k) => [k.toLowerCase(), k]));
const COMMAND_RUNNING = new Set(['proxycommand', 'localcommand', 'permitlocalcommand', 'knownhostscommand', 'match', 'include', 'proxyjump', 'remotecommand', 'sessiontype', 'stdinnull', 'forkafterauthentication', 'controlmaster', 'controlpath', 'loglevel', 'batchmode', 'userknownhostsfile', 'globalknownhostsfile', 'localforward', 'remoteforward', 'dynamicforward', 'clearallforwardings', 'securitykeyprovider', 'pkcs11provider', 'sendenv', 'setenv', 'requesttty']);

export interface SshOptionProblem {
  /** `option`: the option itself is not allowed; `value`: the option is, its value is not. */
  reason: 'option' | 'value';
  expected: string;
  found: string;
}

/** Normalises a YAML value (true → yes, 5 → "5") and checks it against the allow-list. */
export function checkSshOption(key: string, value: unknown): Result<[string, string], SshOptionProblem> {
  const canonical = BY_LOWER.get(key.toLowerCase());
  if (!canonical) {
    const why = COMMAND_RUNNING.has(key.toLowerCase())
      ? 'is refused here (it can run commands or defeats supervision); set it in your own SSH config'
      : 'is not an allowed option';
    return err({ reason: 'option', expected: `one of ${Object.keys(ALLOWED).join(', ')}`, found: `${JSON.stringify(key)}, which ${why}` });
  }
  const text = typeof value === 'boolean' ? (value ? 'yes' : 'no') : typeof value === 'number' ? String(value) : value;
  const rule = ALLOWED[canonical]!;
  if (typeof text !== 'string' || !rule.check(text)) {
    return err({ reason: 'value', expected: `${canonical}: ${rule.expected}`, found: JSON.stringify(value) ?? String(value) });
  }
  return ok([canonical, text]);
}
