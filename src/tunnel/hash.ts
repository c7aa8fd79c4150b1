import { createHash } from 'node:crypto';

/**
 * The tunnel identity used in API paths. It must equal the reference shell
 * implementation's `md5("name|remote_host|remote_port|local_port|direction|interactive")`
 * over the values as written, so scripts that stored hashes keep working.
 */
export function tunnelHash(f: {
  name: string;
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: string;
  interactive: boolean;
}): string {
  const input = [f.name, f.remote_host, f.remote_port, f.local_port, f.direction, String(f.interactive)].join('|');
  return createHash('md5').update(input, 'utf8').digest('hex');
}
