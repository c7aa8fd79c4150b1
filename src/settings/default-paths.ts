/**
 * Default places shared by the daemon and tunnel-cli, so that both find the same
 * socket without configuration. Pure: the caller passes the environment, uid and home.
 */

const join = (...parts: string[]): string => parts.join('/').replace(/\/{2,}/g, '/');

// The XDG spec says a relative path in these variables is invalid and must be ignored.
const absolute = (v: string | undefined): string | null => (v !== undefined && v.startsWith('/') ? v : null);

/** `$XDG_RUNTIME_DIR/tunnel-manager/api.sock`, else `/tmp/tunnel-manager-<uid>/api.sock`. */
export function defaultSocketPath(env: Readonly<Record<string, string | undefined>>, uid: number): string {
  const runtime = absolute(env.XDG_RUNTIME_DIR);
  return runtime !== null ? join(runtime, 'tunnel-manager', 'api.sock') : `/tmp/tunnel-manager-${uid}/api.sock`;
}

/** `$XDG_STATE_HOME/tunnel-manager`, else `~/.local/state/tunnel-manager`. */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const state = absolute(env.XDG_STATE_HOME);
  return state !== null ? join(state, 'tunnel-manager') : join(home, '.local', 'state', 'tunnel-manager');
}
