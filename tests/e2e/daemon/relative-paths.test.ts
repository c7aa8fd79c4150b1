// Relative paths (SPEC §3): --config, --ssh-config, --state-dir and the key files named
// in the config are taken from the working directory the daemon started in, for the
// daemon, `check` and ssh alike. The built daemon, started from a folder with relative
// flags, against the suite's sshd: before, ssh read the daemon's `Include "ssh_config"`
// from ~/.ssh and every tunnel FAILED with "Could not resolve hostname".
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { MAIN, echoServer, port, roundTrip, sshd, type Sshd } from '../daemon-harness.js';

let server: Sshd;
beforeAll(async () => {
  server = await sshd();
}, 30_000);
afterAll(async () => {
  await server?.stop();
});

const running: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) {
    if (c.exitCode === null) {
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A folder like the user's: the ssh config (and, when asked, its key) beside the tunnels file. */
function workDir(sshConfigName: string, keyName: string | null) {
  const dir = mkdtempSync(join(tmpdir(), 'tm-relative-'));
  dirs.push(dir);
  const sshConfig = join(dir, sshConfigName);
  mkdirSync(join(sshConfig, '..'), { recursive: true, mode: 0o700 });
  let text = readFileSync(server.sshConfigPath, 'utf8');
  if (keyName !== null) {
    mkdirSync(join(dir, keyName, '..'), { recursive: true, mode: 0o700 });
    copyFileSync(server.clientKey, join(dir, keyName));
    // The key comes from the tunnels file's ssh_options (relative there), not from this file.
    text = text.replace(/^\s*IdentityFile .*\n/gm, '');
  }
  writeFileSync(sshConfig, text, { mode: 0o600 });
  return dir;
}

function tunnelsFile(localPort: number, remotePort: number, key: string | null): string {
  const options = key === null ? '' : `    ssh_options:\n      IdentityFile: ${key}\n`;
  return `tunnels:\n  - name: rel\n    remote_host: ${server.alias}\n    remote_port: ${remotePort}\n    local_port: ${localPort}\n${options}`;
}

async function startIn(cwd: string, args: string[], apiPort: number) {
  let err = '';
  const child = spawn(process.execPath, [MAIN, '--listen', `127.0.0.1:${apiPort}`, '--socket', join(cwd, 'run', 'api.sock'), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: join(cwd, 'home') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  child.stderr.on('data', (d) => (err += String(d)));
  const status = async (): Promise<{ status: string; last_error: string | null } | undefined> => {
    const res = await fetch(`http://127.0.0.1:${apiPort}/status`).catch(() => null);
    if (res === null || !res.ok) return undefined;
    return ((await res.json()) as { name: string; status: string; last_error: string | null }[]).find((t) => t.name === 'rel');
  };
  const waitRunning = async () => {
    const deadline = Date.now() + 20_000;
    let last: unknown;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`the daemon exited (${child.exitCode}):\n${err}`);
      last = await status();
      if ((last as { status?: string } | undefined)?.status === 'RUNNING') return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`not RUNNING: ${JSON.stringify(last)}\n${err.slice(-3000)}`);
  };
  return { waitRunning, stderr: () => err };
}

function check(cwd: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, 'check', ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: join(cwd, 'home') } }, (e, stdout) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

describe('relative paths from the working directory the daemon started in', () => {
  const cases: { what: string; sshConfig: string; key: string | null }[] = [
    { what: 'a bare file name (ssh would read it from ~/.ssh)', sshConfig: 'ssh_config', key: null },
    { what: 'a ./ and a sub-folder path', sshConfig: './ssh/config', key: null },
    { what: 'a relative IdentityFile in the tunnels file\'s ssh_options', sshConfig: 'ssh_config', key: './keys/client_key' },
  ];

  for (const c of cases) {
    test(`--ssh-config ${c.sshConfig}, --config and --state-dir relative: ${c.what}: the tunnel runs and check agrees`, async () => {
      const dir = workDir(c.sshConfig, c.key === null ? null : 'keys/client_key');
      const target = await port();
      const echo = await echoServer(target);
      try {
        const local = await port();
        writeFileSync(join(dir, 'tunnels.yaml'), tunnelsFile(local, target, c.key));
        const args = ['--config', 'tunnels.yaml', '--ssh-config', c.sshConfig, '--state-dir', 'state'];
        const d = await startIn(dir, args, await port());
        await d.waitRunning();
        expect(await roundTrip(local, 'through')).toBe('through');
        // The daemon's own ssh config includes the user's file by its absolute path.
        expect(readFileSync(join(dir, 'state', 'ssh_config'), 'utf8')).toContain(`Include "${join(dir, c.sshConfig)}"`);
        expect(d.stderr()).not.toContain('Could not resolve hostname');

        const r = await check(dir, args);
        expect(r.stdout).toContain(join(dir, 'tunnels.yaml'));
        expect(r.stdout).toContain(join(dir, c.sshConfig));
        expect(r.stdout).not.toMatch(/could not resolve|not resolve/i);
      } finally {
        await echo.close();
      }
    }, 40_000);
  }
});
