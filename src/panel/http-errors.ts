import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DaemonFailureCode } from './daemon-failure.js';

/**
 * Every error code the panel itself answers with. The page shows each as a sentence
 * from its language's catalogue (`error.<code>`), so a code is added here and in every
 * catalogue at once (tests/unit/panel/catalogues.test.ts checks both).
 */
export const PANEL_ERROR_CODES = [
  'invalid',
  'invalid_body',
  'invalid_hash',
  'login_required',
  'wrong_password',
  'too_many_attempts',
  'foreign_origin',
  'host_not_allowed',
  'not_found',
  'conflict',
  'not_editable',
  'too_large',
  'internal',
] as const;
export type PanelErrorCode = (typeof PANEL_ERROR_CODES)[number];

/** The API's error shape (SPEC §6), with room for details such as field errors. */
export function apiError(c: Context, status: ContentfulStatusCode, code: PanelErrorCode | DaemonFailureCode, message: string, extra: Record<string, unknown> = {}) {
  return c.json({ error: { code, message }, ...extra }, status);
}

/** An error the daemon answered, passed on with its own code (the daemon's API_ERRORS). */
export function daemonErrorAnswer(c: Context, status: ContentfulStatusCode, code: string, message: string) {
  return c.json({ error: { code, message } }, status);
}
