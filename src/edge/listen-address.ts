import { err, ok, type Result } from '../kernel/result.js';

/** A TCP listen address: host without brackets, port 0–65535 (0: any free port, for tests). */
export interface ListenAddress {
  host: string;
  port: number;
}

const EXPECTED = 'HOST:PORT such as 127.0.0.1:8080, [::1]:8080 or localhost:8080';

/**
 * Parses `--listen` / `TUNNEL_API_LISTEN`. The host is required: `:8080` would mean
 * "every interface" in some tools and loopback in others, so it is refused rather
 * than guessed.
 */
export function parseListen(text: string): Result<ListenAddress, string> {
  const found = JSON.stringify(text.slice(0, 100));
  const m = /^(?:\[([0-9A-Fa-f:.]+(?:%[\w.-]+)?)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  if (!m) return err(`expected ${EXPECTED}, found ${found}`);
  const host = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (port > 65535) return err(`expected a port 0-65535 in ${EXPECTED}, found ${found}`);
  return ok({ host, port });
}

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (v4) return v4.slice(1).every((o) => Number(o) <= 255) && v4[1] === '127';
  return /^(?:0{0,4}:){2,7}0{0,3}1$/.test(h) && expandsToLoopback(h);
}

// "::1", "0:0:0:0:0:0:0:1", "0::1": eight groups whose last is 1 and the rest 0.
function expandsToLoopback(h: string): boolean {
  const parts = h.split('::');
  if (parts.length > 2) return false;
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const head = groups(parts[0]);
  const tail = groups(parts[1]);
  const all = parts.length === 2 ? [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail] : head;
  return all.length === 8 && all.slice(0, 7).every((g) => /^0{1,4}$/.test(g)) && /^0{0,3}1$/.test(all[7] ?? '');
}

/** Binding a non-loopback address without a token would expose tunnel control to the network. */
export function checkListenSecurity(listen: ListenAddress, tokens: readonly string[] | null): Result<void, string> {
  if (isLoopback(listen.host) || (tokens !== null && tokens.length > 0)) return ok(undefined);
  const shown = listen.host.includes(':') ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
  return err(`refusing to listen on ${shown} without TUNNEL_API_TOKEN: set a token or listen on 127.0.0.1`);
}
