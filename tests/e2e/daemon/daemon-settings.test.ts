// The built daemon with the reference implementation's settings (SPEC §12) and an SSH
// directory judged as ssh judges it: started as a user would start it.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN, port } from '../daemon-harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(configMode = 0o600) {
  const dir = mkdtempSync(join(tmpdir(), 'tm-settings-'));
  dirs.push(dir);
  const ssh = join(dir, 'ssh');
  mkdirSync(ssh, { mode: 0o755 });
  chmodSync(ssh, 0o755);
  const sshConfig = join(ssh, 'config');
  writeFileSync(sshConfig, 'Host example\n  HostName 127.0.0.1\n');
  chmodSync(sshConfig, configMode);
  return { dir, sshConfig };
}

/** Runs the daemon until `until` holds for its output (then SIGTERM) or it exits; returns exit code and stderr. */
function runDaemon(dir: string, sshConfig: string, env: Record<string, string>, until: (err: string, stop: () => void) => boolean) {
  return new Promise<{ code: number | null; err: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [MAIN, '--config', join(dir, 'config.yaml'), '--socket', join(dir, 'run', 'api.sock'), '--state-dir', join(dir, 'state'), '--ssh-config', sshConfig],
      { env: { PATH: process.env.PATH ?? '', HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stderr.on('data', (d) => {
      err += String(d);
      if (until(err, () => child.kill('SIGTERM'))) child.kill('SIGTERM');
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, err });
    });
  });
}

describe('the reference implementation\'s settings on the built daemon', () => {
  it('API_PORT sets the port, API_KEY guards the API, obsolete settings are named at start', async () => {
    const { dir, sshConfig } = setup();
    const p = await port();
    let checked: { open: number; withKey: number; wrong: number } | null = null;
    let asked = false;
    const r = await runDaemon(dir, sshConfig, { API_PORT: String(p), API_KEY: 'k1,k2', API_ENABLE: 'true', AUTOSSH_GATETIME: '0', WS_PORT: '8022' }, (err, stop) => {
      if (!asked && err.includes('"event":"started"')) {
        asked = true;
        void (async () => {
          const url = `http://127.0.0.1:${p}/config`;
          checked = {
            open: (await fetch(url)).status,
            withKey: (await fetch(url, { headers: { authorization: 'Bearer k2' } })).status,
            wrong: (await fetch(url, { headers: { authorization: 'Bearer nope' } })).status,
          };
          stop();
        })();
      }
      return false;
    });
    expect(checked).toEqual({ open: 401, withKey: 200, wrong: 401 });
    expect(r.err).toContain(`"listen":"127.0.0.1:${p}"`);
    for (const name of ['API_ENABLE', 'AUTOSSH_GATETIME', 'WS_PORT']) {
      expect(r.err).toMatch(new RegExp(`"event":"setting_warning","warning":"${name} is a setting of autossh-tunnel-dockerized that tunnel-manager does not use: `));
    }
  });
});

describe('the SSH directory, judged as ssh judges it', () => {
  it('a 755 folder and a 644 config start, with a warning and its fix in the log', async () => {
    const { dir, sshConfig } = setup(0o644);
    const r = await runDaemon(dir, sshConfig, { TUNNEL_API_LISTEN: `127.0.0.1:${await port()}` }, (err) => err.includes('"event":"started"'));
    expect(r.err).toContain('"event":"started"');
    expect(r.err).toContain(`"event":"ssh_dir_warning","where":"${sshConfig}","warning":"mode is 644; ssh accepts it, 600 keeps it private","fix":"chmod 600 ${sshConfig}"`);
    expect(r.err).toContain('"warning":"mode is 755; ssh accepts it, 700 keeps the folder private"');
  });

  it('a config others can write, which ssh refuses, stops the start with the fix', async () => {
    const { dir, sshConfig } = setup(0o666);
    const r = await runDaemon(dir, sshConfig, { TUNNEL_API_LISTEN: `127.0.0.1:${await port()}` }, () => false);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`- ${sshConfig}: mode is 666: ssh refuses a config file that group or others can write\n  fix: chmod 600 ${sshConfig}`);
    expect(r.err).not.toContain('"event":"started"');
  });
});

describe('an SSH config that is not a regular file', () => {
  it('--ssh-config /dev/null starts without judging /dev', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tm-settings-'));
    dirs.push(dir);
    const r = await runDaemon(dir, '/dev/null', { TUNNEL_API_LISTEN: `127.0.0.1:${await port()}` }, (err) => err.includes('"event":"started"'));
    expect(r.err).toContain('"event":"started"');
    expect(r.err).not.toContain('ssh_dir_warning');
    expect(r.err).not.toContain('/dev/null: the SSH config file does not exist');
  });

  it('a missing config is still refused with the fix', async () => {
    const { dir } = setup();
    const missing = join(dir, 'ssh', 'nope');
    const r = await runDaemon(dir, missing, { TUNNEL_API_LISTEN: `127.0.0.1:${await port()}` }, () => false);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`- ${missing}: the SSH config file does not exist`);
  });
});

describe('no SSH directory at all', () => {
  it('the daemon starts (ssh needs none until a tunnel runs), with a warning naming what to create or mount', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tm-settings-'));
    dirs.push(dir);
    const missing = join(dir, 'home', '.ssh', 'config');
    const r = await runDaemon(dir, missing, { TUNNEL_API_LISTEN: `127.0.0.1:${await port()}` }, (err) => err.includes('"event":"started"'));
    expect(r.err).toContain('"event":"started"');
    expect(r.err).toContain(`"event":"ssh_dir_missing","where":"${join(dir, 'home', '.ssh')}","warning":"the SSH directory ${join(dir, 'home', '.ssh')} does not exist: starting without it; tunnels cannot run until ${missing} is there"`);
    expect(r.err).toContain(`-v ~/.ssh:${join(dir, 'home', '.ssh')}:ro`);
    expect(r.err).not.toContain('is not usable');
  });
});
