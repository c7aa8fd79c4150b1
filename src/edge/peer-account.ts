/**
 * The account on the other end of a TCP connection on this machine (SPEC §6, "No
 * other account"). A loopback port is open to every account, so a listener that holds
 * the owner's SSH login must know who connected, and a client that sends the owner's
 * token must know who listens. Linux lists every TCP socket of the network namespace,
 * with its owner's uid, in /proc/net/tcp and /proc/net/tcp6: the other end of our
 * connection is the socket whose local address is our remote one and whose remote
 * address is our local one. The lookup is the same from both sides.
 */
import { readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { endianness } from 'node:os';
import { isLoopback } from './listen-address.js';

/** Who is at the other end of a connection. */
export type Peer =
  /** A socket of this network namespace, owned by `uid` (as this process's user namespace sees it). */
  | { kind: 'account'; uid: number }
  /** No socket of ours: the other end is another machine (or another network namespace reaching us by a routed address). */
  | { kind: 'network' }
  /** A loopback peer that is not listed (a forwarder between namespaces), a closed connection, or a system without /proc/net/tcp (`unsupported`). */
  | { kind: 'unknown'; why: string; unsupported?: true };

/** The four addresses of a connection, as Node's socket gives them. */
export interface Endpoints {
  localAddress?: string | undefined;
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

/** Reads one of the kernel's socket tables; null when it does not exist (not Linux, no /proc). */
export type TableReader = (file: 'tcp' | 'tcp6') => string | null;

const readTable: TableReader = (file) => {
  try {
    return readFileSync(`/proc/net/${file}`, 'latin1');
  } catch {
    return null;
  }
};

/**
 * The account at the other end of `socket`. Synchronous: the tables are small files
 * the kernel writes on read, and the answer is needed before a request is routed.
 */
export function peerOf(socket: Endpoints, read: TableReader = readTable): Peer {
  const { localAddress: la, localPort: lp, remoteAddress: ra, remotePort: rp } = socket;
  if (la === undefined || lp === undefined || ra === undefined || rp === undefined) {
    return { kind: 'unknown', why: 'the connection has no addresses (already closed)' };
  }
  let sawTable = false;
  for (const [file, theirs, ours] of candidates(ra, la)) {
    const table = read(file);
    if (table === null) continue;
    sawTable = true;
    const uid = ownerIn(table, `${theirs}:${hexPort(rp)} ${ours}:${hexPort(lp)} `);
    if (uid !== null) return { kind: 'account', uid };
  }
  if (!sawTable) return { kind: 'unknown', why: 'this system has no /proc/net/tcp, so the account behind a connection cannot be known', unsupported: true };
  if (isLoopback(ra)) return { kind: 'unknown', why: `the loopback connection from port ${rp} is not listed in /proc/net/tcp (a forwarder from another network namespace)` };
  return { kind: 'network' };
}

/**
 * Where the other end's socket can be listed: an IPv4 connection (also one a
 * dual-stack socket shows as `::ffff:a.b.c.d`) in `tcp`, or, when the other end used
 * an IPv6 socket for it, in `tcp6` with mapped addresses; an IPv6 one in `tcp6`.
 */
function candidates(remote: string, local: string): ['tcp' | 'tcp6', string, string][] {
  const r4 = ipv4Of(remote);
  const l4 = ipv4Of(local);
  if (r4 !== null && l4 !== null) {
    return [
      ['tcp', hexWords(r4), hexWords(l4)],
      ['tcp6', hexWords(mapped(r4)), hexWords(mapped(l4))],
    ];
  }
  const r6 = ipv6Bytes(remote);
  const l6 = ipv6Bytes(local);
  return r6 !== null && l6 !== null ? [['tcp6', hexWords(r6), hexWords(l6)]] : [];
}

/** The uid column of the row whose addresses are `needle` ("local rem "), or null. */
export function ownerIn(table: string, needle: string): number | null {
  const at = table.indexOf(needle);
  if (at === -1) return null;
  const end = table.indexOf('\n', at);
  // st tx_queue:rx_queue tr:tm->when retrnsmt uid
  const uid = table.slice(at + needle.length, end === -1 ? undefined : end).trim().split(/\s+/)[4];
  return uid !== undefined && /^\d+$/.test(uid) ? Number(uid) : null;
}

const hexPort = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');

/** The four bytes of an IPv4 address, also of its IPv4-mapped IPv6 form; else null. */
function ipv4Of(address: string): number[] | null {
  const text = address.toLowerCase().startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  return isIPv4(text) ? text.split('.').map(Number) : null;
}

const mapped = (v4: number[]): number[] => [...Array(10).fill(0), 0xff, 0xff, ...v4];

/** The sixteen bytes of an IPv6 address (a zone is dropped), or null. */
export function ipv6Bytes(address: string): number[] | null {
  const text = address.replace(/%.*$/, '');
  if (!isIPv6(text)) return null;
  const [head = '', tail] = text.split('::');
  const groups = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (isIPv4(g)) {
        const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(g, 16));
    }
    return out;
  };
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const words = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

const hex2 = (b: number): string => b.toString(16).toUpperCase().padStart(2, '0');

/**
 * The kernel prints an address as 32-bit words in the machine's byte order (%08X of
 * the in-memory word): on a little-endian machine each word's bytes come reversed.
 */
function hexWords(bytes: number[]): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4);
    out += (endianness() === 'LE' ? word.reverse() : word).map(hex2).join('');
  }
  return out;
}
