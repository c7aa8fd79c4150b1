import { createHash } from 'node:crypto';

/**
 * The six values a tunnel's identity is taken from, each as text: what the user wrote
 * (quotes removed), with the defaults filled in. Read them from a config entry with
 * `identityOf` in `config/identity.ts`, the one place that decides what "as written" means.
 */
export interface TunnelIdentity {
  name: string;
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: string;
  /** The text as written (`true`, `True`, `yes`), not the boolean: the reference hashes the text. */
  interactive: string;
}

/**
 * The tunnel identity used in API paths. It equals the reference shell implementation's
 * `md5("name|remote_host|remote_port|local_port|direction|interactive")`, so scripts
 * that stored hashes keep working.
 */
export function tunnelHash(f: TunnelIdentity): string {
  const input = [f.name, f.remote_host, f.remote_port, f.local_port, f.direction, f.interactive].join('|');
  return createHash('md5').update(input, 'utf8').digest('hex');
}
