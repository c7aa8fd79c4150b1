import { parseTokens } from '../edge/tokens.js';

/**
 * The environment of the reference implementation (autossh-tunnel-dockerized v2.3.1),
 * read so that a user who copies its compose file and `.env` loses nothing without a
 * word (SPEC §12): its names that still mean something are read as ours, and every
 * other one it documented is named in a warning that says what replaces it.
 */

type Env = Readonly<Record<string, string | undefined>>;

const set = (env: Env, name: string): string | undefined => {
  const v = env[name];
  return v !== undefined && v !== '' ? v : undefined;
};

/** Settings of the reference that no longer apply, with what replaces each. */
export const OBSOLETE: Readonly<Record<string, string>> = {
  API_ENABLE: 'the HTTP API always runs, on 127.0.0.1:8080 unless TUNNEL_API_LISTEN or API_PORT says otherwise; remove it',
  AUTOSSH_GATETIME: 'tunnel-manager supervises ssh itself (restart within 1 s, capped backoff; RUNNING once the forward is established); remove it',
  AUTOSSH_CONFIG_FILE: 'use TUNNEL_CONFIG (or --config)',
  AUTOSSH_STATE_FILE: 'use TUNNEL_STATE_DIR (or --state-dir), a folder',
  SSH_CONFIG_DIR: 'use SSH_CONFIG (the SSH config file, or --ssh-config); in the container, SSH_DIR is the mounted folder',
  API_MAX_CHILDREN: 'the API is served by the daemon itself; remove it',
  API_USE_SOCAT: 'the API is served by the daemon itself, without socat; remove it',
  WS_PORT: 'interactive logins go through `tunnel-cli auth <hash>` or the panel\'s terminal (on the panel\'s port); remove it',
  WS_BASE_URL: 'the panel reaches interactive logins through the daemon\'s API (TUNNEL_API_URL); remove it',
  WS_MAX_CONNECTIONS: 'one terminal at a time per tunnel is built in; remove it',
  WS_IDLE_TIMEOUT: 'remove it: interactive logins end when the login ends or the terminal closes',
  WS_MAX_DURATION: 'remove it: interactive logins end when the login ends or the terminal closes',
  WS_ALLOWED_ORIGINS: 'the panel checks Origin itself; remove it',
};

/** One warning per obsolete setting that is set. */
export function obsoleteWarnings(env: Env): string[] {
  return Object.entries(OBSOLETE)
    .filter(([name]) => set(env, name) !== undefined)
    .map(([name, instead]) => `${name} is a setting of autossh-tunnel-dockerized that tunnel-manager does not use: ${instead}`);
}

/**
 * The API tokens: TUNNEL_API_TOKEN, else the reference's API_KEY (both comma-separated
 * lists). When both are set TUNNEL_API_TOKEN wins and a warning says API_KEY is unused.
 */
export function apiTokens(env: Env, warnings: string[]): string[] | null {
  const ours = parseTokens(env.TUNNEL_API_TOKEN);
  const theirs = parseTokens(env.API_KEY);
  if (ours !== null && theirs !== null && ours.join(',') !== theirs.join(',')) {
    warnings.push('API_KEY is not used because TUNNEL_API_TOKEN is set (TUNNEL_API_TOKEN wins); set one of them');
  }
  return ours ?? theirs;
}

/**
 * The reference's API_PORT: the port of the API on loopback, when neither --listen nor
 * `listenVariable` says where to listen (they win, with a warning).
 */
export function apiPortListen(env: Env, listenGiven: boolean, listenVariable: string, warnings: string[]): string | undefined {
  const p = set(env, 'API_PORT');
  if (p === undefined) return undefined;
  if (listenGiven) {
    warnings.push(`API_PORT is not used because --listen or ${listenVariable} is set (they win); set one of them`);
    return undefined;
  }
  return `127.0.0.1:${p}`;
}

/** The reference panel's API_BASE_URL, read as TUNNEL_API_URL when that is not set. */
export function apiBaseUrl(env: Env, urlGiven: boolean, warnings: string[]): string | undefined {
  const u = set(env, 'API_BASE_URL');
  if (u === undefined) return undefined;
  if (urlGiven) {
    warnings.push('API_BASE_URL is not used because --api or TUNNEL_API_URL is set (they win); set one of them');
    return undefined;
  }
  return u;
}
