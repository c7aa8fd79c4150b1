import type { EngineApi } from './engine-api.js';
import { lookupHash } from '../tunnel/lookup.js';
import { err, ok, type Result } from '../kernel/result.js';
import { apiError } from './errors.js';
import { unreachable } from '../kernel/unreachable.js';

/** Every hash the daemon knows: the config in force plus whatever the supervisor still reports. */
function knownHashes(engine: EngineApi): Set<string> {
  const hashes = new Set(engine.tunnels().map((t) => t.hash));
  for (const s of engine.supervisor.statuses()) hashes.add(s.hash);
  return hashes;
}

/**
 * A `:hash` path parameter to the one full hash it names, or the error response:
 * 400 not hex / too short, 404 unknown, 409 ambiguous (listing the matches).
 * `needsConfig` turns an unknown hash into 503 while the file is invalid: the tunnel
 * may well be in the file the daemon could not load.
 */
/**
 * A `:hash` path parameter to the one full hash it names among `known`, or the error
 * response: 400 not hex / too short, 404 unknown, 409 ambiguous (listing the matches).
 * `notFound` words the 404 (or turns it into another answer).
 */
export function resolveAmong(
  known: Iterable<string>,
  param: string,
  notFound: (message: string) => Response = (message) => apiError('tunnel_not_found', message),
): Result<string, Response> {
  const found = lookupHash(param, known);
  if (found.ok) return found;
  const f = found.error;
  switch (f.reason) {
    case 'invalid':
      return err(apiError('invalid_hash', f.message));
    case 'ambiguous':
      return err(apiError('ambiguous_hash', f.message, { matches: f.matches }));
    case 'not_found':
      return err(notFound(f.message));
    default:
      return unreachable(f, 'failure');
  }
}

/**
 * A `:hash` path parameter to a tunnel the daemon knows (see resolveAmong).
 * `needsConfig` turns an unknown hash into 503 while the file is invalid: the tunnel
 * may well be in the file the daemon could not load.
 */
export function resolveHash(engine: EngineApi, param: string, needsConfig = false): Result<string, Response> {
  return resolveAmong(knownHashes(engine), param, (message) => {
    const health = engine.configHealth();
    if (needsConfig && !health.valid) {
      return apiError('config_invalid', `${message} in the config in force, and the config file ${health.path} is invalid: ${firstLine(health.error)}`);
    }
    return apiError('tunnel_not_found', message);
  });
}

export function firstLine(text: string | null): string {
  return (text ?? 'unknown error').split('\n')[0] ?? '';
}

/** Starting everything while the file is invalid and nothing was ever loaded would silently do nothing. */
export function requireSomeConfig(engine: EngineApi): Result<void, Response> {
  const health = engine.configHealth();
  if (health.valid || engine.tunnels().length > 0) return ok(undefined);
  return err(apiError('config_invalid', `no tunnels are loaded because the config file ${health.path} is invalid: ${firstLine(health.error)}`));
}
