import { err, ok, type Result } from '../kernel/result.js';

export const REMOTE_HOST_EXPECTED =
  'an ssh destination: a Host alias, host name or address, optionally as user@host (an IPv6 address without brackets, as ssh takes it: ::1, user@::1), without white space, not starting with "-"';

const MAX_LENGTH = 255;
const USER = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}$/;
const HOST = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})$/;
// ssh takes a raw IPv6 address as the destination (`::1`, `user@fe80::1%eth0`) and
// reads a bracketed one as a host name that never resolves.
const IPV6 = /^(?=[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*:)[0-9A-Fa-f:.]{2,45}(?:%[A-Za-z0-9_.-]{1,32})?$/;
const BRACKETED = /^\[(.*)\]$/;

/**
 * Checks `remote_host`. It is handed to ssh after `--`, so it cannot become an
 * option, but a value that looks like one (or holds spaces or a newline) is a
 * mistake or an attack either way, and the panel must not be able to write it.
 * Returns why the value is refused, for the message.
 */
export function checkRemoteHost(text: string): Result<string, string> {
  if (text === '') return err('is empty');
  if (text.startsWith('-')) return err('starts with "-" (it would read as an ssh option)');
  if (/\p{Cc}/u.test(text)) return err('holds a control character');
  if (/\s/u.test(text)) return err('holds white space');
  if (text.length > MAX_LENGTH) return err(`is ${text.length} characters long (at most ${MAX_LENGTH})`);
  const at = text.lastIndexOf('@');
  const user = at >= 0 ? text.slice(0, at) : null;
  const host = at >= 0 ? text.slice(at + 1) : text;
  if (user !== null && !USER.test(user)) return err(`has a user name ${JSON.stringify(user)} with characters ssh user names do not have`);
  const inBrackets = BRACKETED.exec(host)?.[1];
  if (inBrackets !== undefined && IPV6.test(inBrackets)) {
    return err(`writes the IPv6 address in brackets, which ssh reads as a host name that does not resolve; write ${JSON.stringify(user !== null ? `${user}@${inBrackets}` : inBrackets)}`);
  }
  if (!HOST.test(host) && !IPV6.test(host)) {
    return err(`has a host part ${JSON.stringify(host)} that is neither a host name, a Host alias nor an IPv6 address`);
  }
  return ok(text);
}
