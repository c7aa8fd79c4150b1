import type { IncomingMessage } from 'node:http';
import type { Refusal } from '../edge/browser-guard.js';
import { errorJson } from './errors.js';
import { errorFamilyOf } from './routes.js';

/**
 * The browser guard's refusal of a `/v1` request (edge/browser-guard.ts), in the shape the
 * path's clients read, as every other answer of the group is: Anthropic's SDK reads
 * only its own.
 */
export function v1RefusalJson(req: IncomingMessage, refused: Refusal): string {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const type = refused.status === 403 ? 'permission_error' : 'invalid_request_error';
  return errorJson({ status: refused.status, type, code: refused.code, message: refused.message }, errorFamilyOf(path, req.headers['anthropic-version']));
}
