import { checkListenSecurity, isLoopback, parseListen } from '../edge/listen-address.js';
export { isLoopback, parseListen } from '../edge/listen-address.js';
import { err, ok, type Result } from '../kernel/result.js';
import { hostName } from '../edge/host-origin-rules.js';
import { apiBaseUrl, apiPortListen, apiTokens, obsoleteWarnings } from './reference-env.js';
import { DIRECTION_MODES, type DirectionMode } from '../tunnel/spec.js';
import { getentPasswd, readAllowedAccounts, type AllowedAccounts, type PasswdLookup } from '../edge/account-names.js';
import { absolutePath, absoluteProgram, type PathBase } from './absolute-path.js';
export type { PathBase } from './absolute-path.js';

/**
 * Reading the daemon's settings: each one a flag or an environment variable, the
 * flag winning (SPEC §2). Pure: the caller hands in the parsed flags, the
 * environment and the few facts about the account (home, uid, whether
 * ~/.ssh/config exists), and gets typed values or one message per bad setting.
 * Every path comes out absolute, relative ones taken from the working directory
 * (SPEC §3), so that the daemon, `check`, ssh and the panel all mean the same file.
 */

export interface HostPort {
  host: string;
  port: number;
}

export interface DaemonSettings {
  /** Absolute, as every path here. */
  configPath: string;
  listen: HostPort;
  socketPath: string;
  sshConfigPath: string | null;
  sshBin: string;
  stateDir: string;
  mode: DirectionMode;
  /** Bearer tokens for the TCP control routes; null when none is set. */
  tokens: string[] | null;
  /** TUNNEL_API_ALLOWED_HOSTS: Host names the TCP listener answers to besides loopback and its address. */
  allowedHosts: string[];
  /** TUNNEL_API_ALLOWED_USERS: the accounts besides this one and root that may use the TCP listener without a credential. */
  allowedAccounts: AllowedAccounts;
  /** Settings that were set but are not used, each with why and what to do; logged at start. */
  warnings: string[];
}

export interface PanelSettings {
  listen: HostPort;
  /**
   * The file the panel edits, from --config or TUNNEL_CONFIG; null when neither is
   * given: the panel then edits the file the daemon runs, which it asks the daemon for.
   */
  configPath: string | null;
  /** Where the default config/config.yaml is, for a panel that cannot ask the daemon. */
  defaultConfigPath: string;
  apiUrl: string;
  apiToken: string | null;
  panelToken: string | null;
  sshConfigPath: string | null;
  mode: DirectionMode;
  /** TUNNEL_API_ALLOWED_USERS, as for the daemon. */
  allowedAccounts: AllowedAccounts;
  warnings: string[];
}

export interface ProxySettings {
  configPath: string;
  listen: HostPort;
  mode: DirectionMode;
  /** TUNNEL_API_ALLOWED_HOSTS, as for the daemon. */
  allowedHosts: string[];
  /** TUNNEL_API_ALLOWED_USERS, as for the daemon. */
  allowedAccounts: AllowedAccounts;
  warnings: string[];
}

/** Facts about the account the daemon runs as, and where it started. */
export interface Account {
  home: string;
  /** The working directory the command started in: relative paths are taken from it. */
  cwd: string;
  uid: number;
  /** Whether `~/.ssh/config` exists (it is then the default `--ssh-config`). */
  hasUserSshConfig: boolean;
  defaultSocketPath: string;
  defaultStateDir: string;
  /** Looks account names up (TUNNEL_API_ALLOWED_USERS); `getent passwd` unless given. */
  lookup?: PasswdLookup;
}

export type Flags = Record<string, unknown>;
type Env = Record<string, string | undefined>;

const DEFAULT_CONFIG = 'config/config.yaml';
const DEFAULT_LISTEN = '127.0.0.1:8080';
const DEFAULT_PANEL_LISTEN = '127.0.0.1:5000';
const DEFAULT_API_URL = 'http://127.0.0.1:8080';

function pick(flags: Flags, flag: string, env: Env, variable: string | null): string | undefined {
  const f = flags[flag];
  if (typeof f === 'string' && f !== '') return f;
  if (typeof f === 'number') return String(f);
  const e = variable === null ? undefined : env[variable];
  return e !== undefined && e !== '' ? e : undefined;
}

function readMode(flags: Flags, env: Env, problems: string[]): DirectionMode {
  const text = pick(flags, 'directionMode', env, 'TUNNEL_DIRECTION_MODE') ?? 'default';
  if ((DIRECTION_MODES as readonly string[]).includes(text)) return text as DirectionMode;
  problems.push(`--direction-mode / TUNNEL_DIRECTION_MODE: expected ${DIRECTION_MODES.join(' or ')}, found ${JSON.stringify(text)}`);
  return 'default';
}

function readListen(flags: Flags, env: Env, variable: string, fallback: string, problems: string[], compat?: string): HostPort {
  const given = pick(flags, 'listen', env, variable);
  const text = given ?? compat ?? fallback;
  const r = parseListen(text);
  if (r.ok) return r.value;
  problems.push(given === undefined && compat !== undefined ? `API_PORT: ${r.error}` : `--listen / ${variable}: ${r.error}`);
  return { host: '127.0.0.1', port: 0 };
}

/** The daemon's API address from API_PORT (the reference's setting) when nothing of ours says where. */
function apiListen(flags: Flags, env: Env, warnings: string[]): string | undefined {
  return apiPortListen(env, pick(flags, 'listen', env, 'TUNNEL_API_LISTEN') !== undefined, 'TUNNEL_API_LISTEN', warnings);
}

/**
 * Where the daemon this environment configures answers: TUNNEL_API_LISTEN, else
 * API_PORT, else the default — the daemon's own rule, so that one set of variables
 * (compose hands both services the same) reaches it. A wildcard bind is reached on loopback.
 */
export function daemonUrl(env: Env): string {
  const r = parseListen(pick({}, '', env, 'TUNNEL_API_LISTEN') ?? apiPortListen(env, false, 'TUNNEL_API_LISTEN', []) ?? DEFAULT_LISTEN);
  if (!r.ok) return DEFAULT_API_URL;
  const host = r.value.host === '0.0.0.0' ? '127.0.0.1' : r.value.host === '::' ? '::1' : r.value.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${r.value.port}`;
}

/**
 * The panel password rule (SPEC §8), for the settings and for startPanel: off loopback
 * a password is required. Null when the address may be served.
 */
export function panelListenProblem(listen: HostPort, panelToken: string | null): string | null {
  if (isLoopback(listen.host) || (panelToken !== null && panelToken !== '')) return null;
  return `refusing to serve the panel on ${listen.host}:${listen.port} without PANEL_TOKEN: anyone who can reach it could edit the tunnels; set PANEL_TOKEN or listen on 127.0.0.1`;
}

function sshConfig(flags: Flags, env: Env, account: Account): string | null {
  const given = pick(flags, 'sshConfig', env, 'SSH_CONFIG');
  if (given !== undefined) return absolutePath(given, account);
  return account.hasUserSshConfig ? `${account.home}/.ssh/config` : null;
}

/** --config / TUNNEL_CONFIG, absolute; undefined when neither is given. */
function givenConfig(flags: Flags, env: Env, base: PathBase): string | undefined {
  const given = pick(flags, 'config', env, 'TUNNEL_CONFIG');
  return given === undefined ? undefined : absolutePath(given, base);
}

/**
 * TUNNEL_API_ALLOWED_HOSTS: the names, comma-separated, that a reverse proxy or the
 * user's other machines give as Host (a port, if written, is not part of the rule).
 */
function readAllowedHosts(env: Env, problems: string[]): string[] {
  const text = env.TUNNEL_API_ALLOWED_HOSTS ?? '';
  const names: string[] = [];
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const name = hostName(item);
    if (item.includes('*')) {
      // A wildcard would let any rebound name in: the check would be gone.
      problems.push(`TUNNEL_API_ALLOWED_HOSTS: expected host names, found the wildcard ${JSON.stringify(item.slice(0, 100))}; list each name clients use`);
    } else if (name === null || /^[a-z][a-z0-9+.-]*:\/\//i.test(item)) {
      problems.push(`TUNNEL_API_ALLOWED_HOSTS: expected host names separated by commas, such as tunnels.example.com,192.168.1.5, found ${JSON.stringify(item.slice(0, 100))}`);
    } else {
      names.push(name);
    }
  }
  return names;
}

const done = <T>(value: T, problems: string[]): Result<T, string[]> => (problems.length > 0 ? err(problems) : ok(value));

export function daemonSettings(flags: Flags, env: Env, account: Account): Result<DaemonSettings, string[]> {
  const problems: string[] = [];
  const warnings = obsoleteWarnings(env);
  const listen = readListen(flags, env, 'TUNNEL_API_LISTEN', DEFAULT_LISTEN, problems, apiListen(flags, env, warnings));
  const tokens = apiTokens(env, warnings);
  const secure = checkListenSecurity(listen, tokens);
  if (!secure.ok) problems.push(secure.error);
  const settings: DaemonSettings = {
    configPath: givenConfig(flags, env, account) ?? absolutePath(DEFAULT_CONFIG, account),
    listen,
    socketPath: absolutePath(pick(flags, 'socket', env, 'TUNNEL_SOCKET') ?? account.defaultSocketPath, account),
    sshConfigPath: sshConfig(flags, env, account),
    sshBin: absoluteProgram(pick(flags, 'sshBin', env, 'SSH_BIN') ?? 'ssh', account),
    stateDir: absolutePath(pick(flags, 'stateDir', env, 'TUNNEL_STATE_DIR') ?? account.defaultStateDir, account),
    mode: readMode(flags, env, problems),
    tokens,
    allowedHosts: readAllowedHosts(env, problems),
    allowedAccounts: readAllowedAccounts(env.TUNNEL_API_ALLOWED_USERS, account.lookup ?? getentPasswd, problems),
    warnings,
  };
  return done(settings, problems);
}

export function panelSettings(flags: Flags, env: Env, account: Account): Result<PanelSettings, string[]> {
  const problems: string[] = [];
  const warnings = obsoleteWarnings(env);
  const listen = readListen(flags, env, 'PANEL_LISTEN', DEFAULT_PANEL_LISTEN, problems);
  const panelToken = pick({}, '', env, 'PANEL_TOKEN') ?? null;
  const refused = panelListenProblem(listen, panelToken);
  if (refused !== null) problems.push(refused);
  const ours = pick(flags, 'api', env, 'TUNNEL_API_URL');
  const apiUrl = ours ?? apiBaseUrl(env, false, warnings) ?? daemonUrl(env);
  if (ours !== undefined) apiBaseUrl(env, true, warnings);
  if (!URL.canParse(apiUrl) || !/^https?:$/.test(new URL(apiUrl).protocol)) {
    problems.push(`--api / TUNNEL_API_URL: expected an http:// URL such as ${DEFAULT_API_URL}, found ${JSON.stringify(apiUrl)}`);
  }
  const settings: PanelSettings = {
    listen,
    configPath: givenConfig(flags, env, account) ?? null,
    defaultConfigPath: absolutePath(DEFAULT_CONFIG, account),
    apiUrl,
    apiToken: apiTokens(env, warnings)?.[0] ?? null,
    panelToken,
    sshConfigPath: sshConfig(flags, env, account),
    mode: readMode(flags, env, problems),
    allowedAccounts: readAllowedAccounts(env.TUNNEL_API_ALLOWED_USERS, account.lookup ?? getentPasswd, problems),
    warnings,
  };
  return done(settings, problems);
}

export function proxySettings(flags: Flags, env: Env, base: PathBase, lookup: PasswdLookup = getentPasswd): Result<ProxySettings, string[]> {
  const problems: string[] = [];
  const warnings = obsoleteWarnings(env);
  const settings: ProxySettings = {
    configPath: givenConfig(flags, env, base) ?? absolutePath(DEFAULT_CONFIG, base),
    listen: readListen(flags, env, 'TUNNEL_API_LISTEN', DEFAULT_LISTEN, problems, apiListen(flags, env, warnings)),
    mode: readMode(flags, env, problems),
    allowedHosts: readAllowedHosts(env, problems),
    allowedAccounts: readAllowedAccounts(env.TUNNEL_API_ALLOWED_USERS, lookup, problems),
    warnings,
  };
  return done(settings, problems);
}
