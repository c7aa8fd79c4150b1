// The built daemon (dist/main.js, from `npm run build`) started by the entrypoint as
// root, the way the image starts it: it must serve /health as uid/gid 4242.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { ENTRYPOINT, REPO, UID, makeFixture, type Fixture } from './fixture.js';
// @ts-expect-error plain JS helper shared with the other suites
import { freePort } from '../../scripts/lib/sshd.mjs';

const MAIN = join(REPO, 'dist/main.js');

let fx: Fixture;
let etc: string;
beforeEach(async () => {
  fx = await makeFixture();
  etc = join(fx.root, 'etc');
  await execa('cp', ['-a', '/etc', etc]);
  await appendFile(join(etc, 'passwd'), 'tunnel:x:911:911::/home/tunnel:/usr/sbin/nologin\n');
  await appendFile(join(etc, 'group'), 'tunnel:x:911:\n');
  await writeFile(join(fx.bin, 'tunnel-manager'), `#!/bin/sh\nexec node ${MAIN} "$@"\n`, { mode: 0o755 });
});
afterEach(async () => {
  await fx.cleanup();
});

/** /health once the daemon has loaded its config (until then the other routes answer 503 loading). */
async function health(port: number, deadline: number, exited: () => string | null): Promise<{ status: number; body: any }> {
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      const body = (await res.json()) as { loading?: boolean } | null;
      if (body?.loading !== true || Date.now() > deadline) return { status: res.status, body };
      await new Promise((r) => setTimeout(r, 100));
    } catch (e) {
      const gone = exited();
      if (gone !== null) throw new Error(`the daemon exited before serving /health: ${gone}`, { cause: e });
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The entrypoint as root in a private mount namespace over the copy of /etc, so the
 * renumbered account is the image's, never this machine's; `gone` says how it ended, once it has.
 */
function startEntrypoint(env: Record<string, string | undefined>) {
  const child = execa('unshare', ['-m', 'sh', '-c', 'mount --bind "$1" /etc && shift && exec sh "$@"', 'sh', etc, ENTRYPOINT], {
    env,
    extendEnv: false,
    reject: false,
  });
  let ended: string | null = null;
  void child.then((r) => {
    ended = `exit ${r.exitCode ?? r.signal}: ${String(r.stderr).trim()}`;
  });
  return { child, gone: () => ended };
}

describe('the real daemon through the entrypoint', () => {
  it('is built (npm run build makes dist/main.js)', () => {
    expect(existsSync(MAIN), `${MAIN} is missing: run npm run build`).toBe(true);
  });

  it('serves /health as PUID/PGID, makes its socket, and stops on SIGTERM', async () => {
    const port: number = await freePort();
    await writeFile(join(fx.root, 'config.yaml'), 'tunnels: []\n');
    const env = {
      ...fx.env,
      PATH: `${fx.bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
      TUNNEL_USER: 'tunnel',
      TUNNEL_CONFIG: join(fx.root, 'config.yaml'),
      TUNNEL_API_LISTEN: `127.0.0.1:${port}`,
    };
    const { child, gone } = startEntrypoint(env);
    try {
      const h = await health(port, Date.now() + 15_000, gone);
      expect(h.status).toBe(200);
      expect(h.body.ok).toBe(true);
      // exec all the way down: the child we started is the node process itself.
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      expect(status).toMatch(new RegExp(`^Uid:\\s+${UID}\\s+${UID}\\s+${UID}\\s+${UID}$`, 'm'));
      expect(status).toMatch(new RegExp(`^Gid:\\s+${UID}\\s+${UID}\\s+${UID}\\s+${UID}$`, 'm'));
      expect(status).toMatch(/^Groups:\s*$/m);
      expect(await readFile(`/proc/${child.pid}/comm`, 'utf8')).toBe('node\n');
      const sock = await stat(fx.env.TUNNEL_SOCKET as string);
      expect([sock.isSocket(), sock.uid, sock.mode & 0o777]).toEqual([true, UID, 0o600]);
    } finally {
      child.kill('SIGTERM');
    }
    const r = await child;
    expect(r.signal === 'SIGTERM' || r.exitCode === 0).toBe(true);
    expect(existsSync(`/proc/${child.pid}`)).toBe(false);
  });

  it('takes the reference\'s settings from compose: API_PORT, API_KEY, an obsolete one named', async () => {
    const port: number = await freePort();
    await writeFile(join(fx.root, 'config.yaml'), 'tunnels: []\n');
    const env = {
      ...fx.env,
      PATH: `${fx.bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
      TUNNEL_USER: 'tunnel',
      TUNNEL_CONFIG: join(fx.root, 'config.yaml'),
      // As compose passes them: unset ours as "", the reference's as the user wrote them.
      TUNNEL_API_TOKEN: '',
      API_KEY: 'ref-key',
      API_PORT: String(port),
      AUTOSSH_GATETIME: '0',
    };
    const { child, gone } = startEntrypoint(env);
    try {
      const h = await health(port, Date.now() + 15_000, gone);
      expect(h.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/config`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/config`, { headers: { authorization: 'Bearer ref-key' } })).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    const r = await child;
    expect(String(r.stderr)).toMatch(/"event":"setting_warning","warning":"AUTOSSH_GATETIME is a setting of autossh-tunnel-dockerized/);
  });
});
