/**
 * `tunnel-cli hash`'s arguments, read with the config file's rules (SPEC §3, §5): each
 * one is checked as the daemon checks the same field written as a quoted string, and
 * defaulted as there, so that a hash printed here is the hash the daemon gives that
 * entry — and an argument the file would refuse is refused, saying which one, what was
 * expected and what was found.
 */
import { checkRemoteHost, REMOTE_HOST_EXPECTED } from '../config/remote-host.js';
import { err, ok, type Result } from '../kernel/result.js';
import { ENDPOINT_EXPECTED, parseEndpoint } from '../tunnel/endpoint.js';
import { tunnelHash, type TunnelIdentity } from '../tunnel/hash.js';
import { DIRECTION_EXPECTED, DIRECTIONS, type Direction } from '../tunnel/spec.js';

export const HASH_USAGE = '<name> <remote_host> <remote_port> <local_port> [direction] [interactive]';

// The config file's defaults and limits (config/identity.ts, config/tunnel-entry.ts);
// tests/unit/cli/hash-args.test.ts holds this module to the config reader's verdicts.
const DEFAULT_NAME = 'unnamed';
const DEFAULT_DIRECTION: Direction = 'remote_to_local';
const MAX_NAME = 128;
const NAME_EXPECTED = `a name of at most ${MAX_NAME} characters without control characters (empty: "${DEFAULT_NAME}")`;
const INTERACTIVE_EXPECTED = 'true or false (also yes or no, in any case)';

const FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction', 'interactive'] as const;
type Field = (typeof FIELDS)[number];
const ORDINALS = ['1st', '2nd', '3rd', '4th', '5th', '6th'];

const found = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 79)}…` : text);

/**
 * The identity the arguments name, as the daemon would read it from the file: the
 * text as typed (ports keep theirs: `05432` is not `5432`), `name` empty → `unnamed`,
 * `direction` absent or empty → `remote_to_local`, `interactive` absent → `false`.
 * Every argument's problem at once, in one line.
 */
export function readHashArgs(args: readonly string[]): Result<TunnelIdentity, string> {
  if (args.length < 4 || args.length > FIELDS.length) {
    const which = args.length < 4 ? `: no ${FIELDS.slice(args.length, 4).join(', no ')}` : `: ${args.slice(FIELDS.length).map((a) => found(a)).join(' ')} after interactive`;
    return err(`expected ${HASH_USAGE}, found ${args.length} argument${args.length === 1 ? '' : 's'}${which}`);
  }
  const arg = (f: Field) => args[FIELDS.indexOf(f)];
  const problems: string[] = [];
  const problem = (f: Field, expected: string, what: string) =>
    problems.push(`${f} (the ${ORDINALS[FIELDS.indexOf(f)] ?? ''} argument): expected ${expected}, found ${what}`);

  const name = arg('name') ?? '';
  if (/\p{Cc}/u.test(name)) problem('name', NAME_EXPECTED, `${found(name)}, which holds a control character`);
  else if (name.length > MAX_NAME) problem('name', NAME_EXPECTED, `a name of ${name.length} characters`);

  const host = arg('remote_host') ?? '';
  const checked = checkRemoteHost(host);
  if (!checked.ok) problem('remote_host', REMOTE_HOST_EXPECTED, `${found(host)}, which ${checked.error}`);

  // An empty direction is the default, as `direction: ""` is in the file.
  const directionText = arg('direction') ?? '';
  const direction = directionText === '' ? DEFAULT_DIRECTION : (DIRECTIONS as readonly string[]).includes(directionText) ? (directionText as Direction) : null;
  if (direction === null) problem('direction', DIRECTION_EXPECTED, found(directionText));

  const remotePort = arg('remote_port') ?? '';
  const localPort = arg('local_port') ?? '';
  if (direction === 'socks') {
    // A SOCKS proxy (ssh -D) connects wherever its clients ask: its hash takes an empty remote_port (SPEC §14).
    if (remotePort !== '') problem('remote_port', 'none for direction socks: an empty argument ("")', found(remotePort));
  } else if (!parseEndpoint(remotePort).ok) {
    problem('remote_port', ENDPOINT_EXPECTED, found(remotePort));
  }
  if (!parseEndpoint(localPort).ok) problem('local_port', ENDPOINT_EXPECTED, `${found(localPort)}${shiftedHint(args)}`);

  // Hashed as typed (`True` and `true` give other hashes), as the file's text is.
  const interactive = arg('interactive') ?? 'false';
  if (!/^(true|false|yes|no)$/i.test(interactive)) problem('interactive', INTERACTIVE_EXPECTED, found(interactive));

  if (problems.length > 0) return err(problems.join('; '));
  return ok({
    name: name === '' ? DEFAULT_NAME : name,
    remote_host: host,
    remote_port: remotePort,
    local_port: localPort,
    direction: directionText === '' ? DEFAULT_DIRECTION : directionText,
    interactive,
  });
}

/**
 * `hash proxy host 1080 socks`: a direction where local_port goes, so an argument before
 * it is missing — for a SOCKS tunnel, the remote_port it does not have, which is passed
 * empty instead.
 */
function shiftedHint(args: readonly string[]): string {
  const at = args[3];
  if (at === undefined || !(DIRECTIONS as readonly string[]).includes(at) || args.length === FIELDS.length) return '';
  if (at !== 'socks') return ', a direction: an argument before it is missing';
  const word = (a: string) => (/^[\w.:@[\]/-]+$/.test(a) ? a : JSON.stringify(a));
  const fixed = [...args.slice(0, 2), '', ...args.slice(2)];
  return `, a direction: a SOCKS tunnel has no remote_port; pass an empty one: tunnel-cli hash ${fixed.map(word).join(' ')}`;
}

/** `hash`'s answer: the tunnel's hash, or why the arguments are not a tunnel entry. */
export function hashOf(args: readonly string[]): Result<string, string> {
  const identity = readHashArgs(args);
  return identity.ok ? ok(tunnelHash(identity.value)) : identity;
}
