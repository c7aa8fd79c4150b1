import { err, ok, type Result } from '../kernel/result.js';
import { parseTokens } from '../edge/tokens.js';

/** Where the daemon is: its unix socket (no token), or its HTTP URL (with an optional token). */
export type Target = { kind: 'socket'; path: string; named?: boolean } | { kind: 'url'; url: URL; token: string | null };

/**
 * Picks the daemon's address. Flags win over the environment; the socket variable wins
 * over the URL one, because the container sets both for its two services and the
 * socket is the one that needs no token.
 */
export function resolveTarget(
  flags: { socket?: string; url?: string; token?: string },
  env: Readonly<Record<string, string | undefined>>,
  defaultSocket: string,
): Result<Target, string> {
  if (flags.socket !== undefined && flags.url !== undefined) return err('use either --socket or --url, not both');
  const token = flags.token ?? parseTokens(env.TUNNEL_API_TOKEN)?.[0] ?? null;
  const fromUrl = (text: string, origin: string): Result<Target, string> => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return err(`${origin}: expected a URL such as http://127.0.0.1:8080, found ${JSON.stringify(text)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return err(`${origin}: expected an http:// or https:// URL, found ${JSON.stringify(text)}`);
    return ok({ kind: 'url', url, token });
  };
  if (flags.url !== undefined) return fromUrl(flags.url, '--url');
  if (flags.socket !== undefined) return socket(flags.socket, '--socket');
  if (env.TUNNEL_SOCKET) return socket(env.TUNNEL_SOCKET, 'TUNNEL_SOCKET');
  if (env.TUNNEL_API_URL) return fromUrl(env.TUNNEL_API_URL, 'TUNNEL_API_URL');
  return ok({ kind: 'socket', path: defaultSocket });
}

function socket(path: string, origin: string): Result<Target, string> {
  if (path === '') return err(`${origin}: expected the path of the daemon's socket, found an empty value`);
  // Given by the user, not the default (listener/owned-path.ts: root may then use the daemon account's socket).
  return ok({ kind: 'socket', path, named: true });
}

export function describeTarget(t: Target): string {
  return t.kind === 'socket' ? `the socket ${t.path}` : t.url.origin + t.url.pathname.replace(/\/$/, '');
}
