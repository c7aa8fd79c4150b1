// The one settings reader (src/settings/settings.ts) with the reference implementation's names (SPEC §12).
import { describe, expect, it } from 'vitest';
import { OBSOLETE } from '../../../src/settings/reference-env.js';
import { daemonSettings, panelListenProblem, panelSettings, proxySettings, type Account } from '../../../src/settings/settings.js';

const account: Account = { home: '/home/u', cwd: '/srv/tunnels', uid: 1000, hasUserSshConfig: false, defaultSocketPath: '/run/u/api.sock', defaultStateDir: '/home/u/.local/state/tm' };
const daemon = (env: Record<string, string>, flags: Record<string, unknown> = {}) => {
  const r = daemonSettings(flags, env, account);
  if (!r.ok) throw new Error(r.error.join('; '));
  return r.value;
};

describe('the reference implementation\'s settings', () => {
  it('API_KEY works as TUNNEL_API_TOKEN, several comma-separated', () => {
    expect(daemon({ API_KEY: 'k1, k2' }).tokens).toEqual(['k1', 'k2']);
    expect(daemon({}).tokens).toBeNull();
  });

  it('with both, TUNNEL_API_TOKEN wins and a warning names API_KEY', () => {
    const s = daemon({ API_KEY: 'theirs', TUNNEL_API_TOKEN: 'ours' });
    expect(s.tokens).toEqual(['ours']);
    expect(s.warnings).toEqual(['API_KEY is not used because TUNNEL_API_TOKEN is set (TUNNEL_API_TOKEN wins); set one of them']);
    expect(daemon({ API_KEY: 'same', TUNNEL_API_TOKEN: 'same' }).warnings).toEqual([]);
  });

  it('API_PORT sets the API port on loopback; --listen and TUNNEL_API_LISTEN win with a warning', () => {
    expect(daemon({ API_PORT: '9090' }).listen).toEqual({ host: '127.0.0.1', port: 9090 });
    const s = daemon({ API_PORT: '9090', TUNNEL_API_LISTEN: '127.0.0.1:7070' });
    expect(s.listen.port).toBe(7070);
    expect(s.warnings[0]).toMatch(/^API_PORT is not used because --listen or TUNNEL_API_LISTEN is set/);
    expect(daemon({ API_PORT: '9090' }, { listen: '127.0.0.1:6060' }).listen.port).toBe(6060);
    const bad = daemonSettings({}, { API_PORT: 'eighty' }, account);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error[0]).toMatch(/^API_PORT: /);
    // The proxy shares the daemon's listener settings.
    const p = proxySettings({}, { API_PORT: '9091' }, account);
    expect(p.ok && p.value.listen.port).toBe(9091);
  });

  it('every obsolete setting is named in a warning with what replaces it', () => {
    const env = Object.fromEntries(Object.keys(OBSOLETE).map((k) => [k, 'x']));
    const s = daemon(env);
    expect(s.warnings).toHaveLength(Object.keys(OBSOLETE).length);
    for (const name of ['API_ENABLE', 'AUTOSSH_GATETIME', 'WS_PORT', 'AUTOSSH_CONFIG_FILE', 'SSH_CONFIG_DIR']) {
      expect(s.warnings.find((w) => w.startsWith(`${name} is a setting of autossh-tunnel-dockerized`))).toBeDefined();
    }
    expect(s.warnings.find((w) => w.startsWith('AUTOSSH_CONFIG_FILE'))).toContain('TUNNEL_CONFIG');
    // Empty means unset, as compose writes it.
    expect(daemon({ API_ENABLE: '' }).warnings).toEqual([]);
  });

  it('the panel: API_KEY for the daemon, API_PORT or API_BASE_URL for where it is', () => {
    const r = panelSettings({}, { API_KEY: 'k', API_PORT: '9090' }, account);
    expect(r.ok && r.value.apiToken).toBe('k');
    expect(r.ok && r.value.apiUrl).toBe('http://127.0.0.1:9090');
    const base = panelSettings({}, { API_BASE_URL: 'http://localhost:8081' }, account);
    expect(base.ok && base.value.apiUrl).toBe('http://localhost:8081');
    const both = panelSettings({}, { API_BASE_URL: 'http://localhost:8081', TUNNEL_API_URL: 'http://127.0.0.1:8082' }, account);
    expect(both.ok && both.value.apiUrl).toBe('http://127.0.0.1:8082');
    expect(both.ok && both.value.warnings).toEqual(['API_BASE_URL is not used because --api or TUNNEL_API_URL is set (they win); set one of them']);
  });

  it('the panel finds the daemon by the variables the daemon listens by (compose passes unset ones as "")', () => {
    const url = (env: Record<string, string>) => {
      const r = panelSettings({}, env, account);
      return r.ok ? r.value.apiUrl : r.error;
    };
    const unset = { TUNNEL_API_URL: '', TUNNEL_API_LISTEN: '', API_PORT: '' };
    expect(url(unset)).toBe('http://127.0.0.1:8080');
    expect(url({ ...unset, API_PORT: '9191' })).toBe('http://127.0.0.1:9191');
    expect(url({ ...unset, TUNNEL_API_LISTEN: '127.0.0.2:9292', API_PORT: '9191' })).toBe('http://127.0.0.2:9292');
    expect(url({ ...unset, TUNNEL_API_LISTEN: '0.0.0.0:9393' })).toBe('http://127.0.0.1:9393');
    expect(url({ ...unset, TUNNEL_API_LISTEN: '[::]:9494' })).toBe('http://[::1]:9494');
    // And the daemon, from the same environment, listens there.
    const d = daemonSettings({}, { ...unset, API_PORT: '9191' }, account);
    expect(d.ok && d.value.listen).toEqual({ host: '127.0.0.1', port: 9191 });
    expect(d.ok && d.value.warnings).toEqual([]);
  });
});

describe('the panel password rule, one source for the settings and startPanel', () => {
  it('off loopback a PANEL_TOKEN is required', () => {
    expect(panelListenProblem({ host: '127.0.0.1', port: 5000 }, null)).toBeNull();
    expect(panelListenProblem({ host: '0.0.0.0', port: 5000 }, 'pw')).toBeNull();
    expect(panelListenProblem({ host: '0.0.0.0', port: 5000 }, null)).toMatch(/^refusing to serve the panel on 0\.0\.0\.0:5000 without PANEL_TOKEN/);
    const r = panelSettings({ listen: '0.0.0.0:5000' }, {}, account);
    expect(!r.ok && r.error[0]).toBe(panelListenProblem({ host: '0.0.0.0', port: 5000 }, null));
  });
});

describe('relative paths are taken from the working directory, once (SPEC §3)', () => {
  const withSsh: Account = { ...account, hasUserSshConfig: true };

  it('--config, --ssh-config, --state-dir, --socket and --ssh-bin come out absolute, flags and variables alike', () => {
    const s = daemon({}, { config: 'tunnels.yaml', sshConfig: 'ssh_config', stateDir: './state', socket: 'run/../run/api.sock', sshBin: 'bin/ssh' });
    expect(s.configPath).toBe('/srv/tunnels/tunnels.yaml');
    expect(s.sshConfigPath).toBe('/srv/tunnels/ssh_config');
    expect(s.stateDir).toBe('/srv/tunnels/state');
    expect(s.socketPath).toBe('/srv/tunnels/run/api.sock');
    expect(s.sshBin).toBe('/srv/tunnels/bin/ssh');
    const e = daemon({ TUNNEL_CONFIG: '../other/c.yaml', SSH_CONFIG: 'ssh/config', TUNNEL_STATE_DIR: 'st', TUNNEL_SOCKET: 's.sock', SSH_BIN: './ssh' });
    expect([e.configPath, e.sshConfigPath, e.stateDir, e.socketPath, e.sshBin]).toEqual(['/srv/other/c.yaml', '/srv/tunnels/ssh/config', '/srv/tunnels/st', '/srv/tunnels/s.sock', '/srv/tunnels/ssh']);
  });

  it('the default config/config.yaml is the working directory\'s, and ~/ is the home (a variable is not expanded by a shell)', () => {
    expect(daemon({}).configPath).toBe('/srv/tunnels/config/config.yaml');
    expect(daemon({ SSH_CONFIG: '~/.ssh/work_config' }).sshConfigPath).toBe('/home/u/.ssh/work_config');
    expect(daemon({ TUNNEL_CONFIG: '~' }).configPath).toBe('/home/u');
  });

  it('absolute paths, /dev/null and a bare program name are kept as given', () => {
    const s = daemon({ SSH_CONFIG: '/dev/null', TUNNEL_CONFIG: '/etc/tm//c.yaml', SSH_BIN: 'ssh' });
    expect(s.sshConfigPath).toBe('/dev/null');
    expect(s.configPath).toBe('/etc/tm/c.yaml');
    expect(s.sshBin).toBe('ssh');
    const d = daemonSettings({}, {}, withSsh);
    expect(d.ok && d.value.sshConfigPath).toBe('/home/u/.ssh/config');
  });

  it('check reads the same settings as the daemon; the proxy and the panel make --config absolute too', () => {
    const p = proxySettings({ config: 'c.yaml' }, {}, account);
    expect(p.ok && p.value.configPath).toBe('/srv/tunnels/c.yaml');
    const panel = panelSettings({}, { TUNNEL_CONFIG: 'c.yaml', SSH_CONFIG: 'sshc' }, account);
    expect(panel.ok && panel.value.configPath).toBe('/srv/tunnels/c.yaml');
    expect(panel.ok && panel.value.sshConfigPath).toBe('/srv/tunnels/sshc');
  });

  it('the panel without --config or TUNNEL_CONFIG asks the daemon (configPath null), its fallback absolute', () => {
    const r = panelSettings({}, { TUNNEL_CONFIG: '' }, account);
    expect(r.ok && r.value.configPath).toBeNull();
    expect(r.ok && r.value.defaultConfigPath).toBe('/srv/tunnels/config/config.yaml');
  });
});
