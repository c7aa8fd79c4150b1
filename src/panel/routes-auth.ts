import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import { passwordMatches, SESSION_COOKIE, type Sessions } from './auth.js';
import { apiError } from './http-errors.js';

export interface AuthDeps {
  /** PANEL_TOKEN; null when the panel needs no password (loopback only). */
  password: string | null;
  sessions: Sessions;
}

const LoginBody = z.object({ password: z.string().max(4096) });
const FAILURE_WINDOW_MS = 60_000;
const MAX_FAILURES = 20;

const secure = (c: Context) => new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';

/** Whether a request belongs to a logged-in browser (always, without a password). */
export function isAuthenticated(c: Context, deps: AuthDeps): boolean {
  return deps.password === null || deps.sessions.touch(getCookie(c, SESSION_COOKIE));
}

/** Login and logout. The password is compared in constant time; wrong guesses are rate-limited. */
export function createAuthApp(deps: AuthDeps): Hono {
  const app = new Hono();
  const failures: number[] = [];

  app.get('/session', (c) => c.json({ password_required: deps.password !== null, authenticated: isAuthenticated(c, deps) }));

  app.post('/login', async (c) => {
    if (deps.password === null) return c.json({ authenticated: true });
    const now = Date.now();
    while (failures.length > 0 && (failures[0] ?? 0) < now - FAILURE_WINDOW_MS) failures.shift();
    if (failures.length >= MAX_FAILURES) return apiError(c, 429, 'too_many_attempts', 'too many wrong passwords; wait a minute and try again');
    const body = LoginBody.safeParse(await c.req.json().catch(() => null));
    if (!body.success) return apiError(c, 400, 'invalid_body', 'expected {"password": "…"}');
    if (!passwordMatches(body.data.password, deps.password)) {
      failures.push(now);
      return apiError(c, 401, 'wrong_password', 'wrong password');
    }
    setCookie(c, SESSION_COOKIE, deps.sessions.create(), { httpOnly: true, sameSite: 'Strict', path: '/', secure: secure(c) });
    return c.json({ authenticated: true });
  });

  app.post('/logout', (c) => {
    deps.sessions.revoke(getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: secure(c) });
    return c.json({ authenticated: false });
  });

  return app;
}
