import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The API's error shape (SPEC §6), with room for details such as field errors. */
export function apiError(c: Context, status: ContentfulStatusCode, code: string, message: string, extra: Record<string, unknown> = {}) {
  return c.json({ error: { code, message }, ...extra }, status);
}
