// The jump hosts of a ProxyJump chain, named the way each hop's own ssh matches `Host`
// lines. ssh runs a hop as `ssh [-l user] [-p port] [-J earlier,hops] -F <file> <host>
// -W …`: the hop matches `Host <host>`, the host part of `user@host:port`,
// `user@[v6]:port` or `ssh://user@host:port`. Only names made of plain host name
// characters go into the daemon's ssh config (daemon-config.ts); any other is refused
// with the reason, and that hop keeps the files every host gets. Pure.
import { err, ok, type Result } from '../kernel/result.js';

/** What a hop left without a block of its own reads: the files every host gets. */
export const HOP_FALLBACK = "the daemon's known_hosts, ~/.ssh/known_hosts and ~/.ssh/known_hosts2 only";

/** Host name characters, and `:` for IPv6: nothing ssh reads as a pattern (`*?!,`), a quote, a space or a token. */
export const PLAIN_HOST = /^[A-Za-z0-9_.:-]+$/;

/** A hop's `Host` name, or why it cannot be written into an ssh config. */
export function hopHost(hop: string): Result<string, string> {
  let rest = hop;
  if (/^ssh:\/\//i.test(rest)) {
    // Its user may be %-encoded or carry `;` parameters; only the host part matters here.
    rest = rest.slice('ssh://'.length).replace(/\/$/, '');
  }
  const at = rest.lastIndexOf('@');
  if (at >= 0) rest = rest.slice(at + 1);
  let host: string;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return err('an opening "[" without its "]"');
    host = rest.slice(1, close);
  } else {
    host = rest.split(/[:/]/, 1)[0] ?? '';
  }
  if (host === '') return err('no host name');
  if (host.startsWith('-')) return err('a host name starting with "-"');
  if (!PLAIN_HOST.test(host)) return err('characters other than letters, digits and ._-: in the host name');
  return ok(host);
}

/** The hops of a ProxyJump value as ssh prints it (`u@a:2222,b`), first hop first; none for `none`. */
export function jumpChain(proxyJump: string | null): string[] {
  if (proxyJump === null || proxyJump.toLowerCase() === 'none') return [];
  return proxyJump.split(',').filter((h) => h !== '');
}
