import { readFileSync } from 'node:fs';

/**
 * The package's version, as `tunnel-manager --version` and `tunnel-cli --version`
 * print it. Read from package.json next to dist/ (this file compiles to dist/version.js);
 * "0.0.0" when that file is missing, as in a bundle without it.
 */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
