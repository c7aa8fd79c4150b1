// docker/entrypoint.sh run outside a container, as root, the way the image runs it.
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { ENTRYPOINT, UID, entrypoint, makeFixture, type Fixture } from './fixture.js';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

describe('entrypoint: user switch', () => {
  it('is run by root here (the tests need it)', () => {
    expect(process.getuid?.()).toBe(0);
  });

  it('runs tunnel-manager from PATH as PUID/PGID with no extra groups', async () => {
    const r = await entrypoint(fx.env);
    expect(r.stderr).not.toContain('SSH directory');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`uid=${UID} gid=${UID} groups=${UID} args=`);
  });

  it.each([
    [['check'], 'check'],
    [['panel', '--listen', '127.0.0.1:5001'], 'panel --listen 127.0.0.1:5001'],
    [['proxy'], 'proxy'],
    [['migrate', '--write'], 'migrate --write'],
    [['serve'], 'serve'],
    [['--config', '/x.yaml'], '--config /x.yaml'],
  ])('passes %j to tunnel-manager', async (args, shown) => {
    const r = await entrypoint(fx.env, args);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`uid=${UID} gid=${UID} groups=${UID} args=${shown}`);
  });

  it('runs any other command as given, unprivileged', async () => {
    const r = await entrypoint(fx.env, ['sh', '-c', 'echo "$(id -u):$(id -g) $0"', 'hello']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`${UID}:${UID} hello`);
  });

  it('creates the state dir (700) and the socket and config folders for PUID', async () => {
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(0);
    const state = await stat(fx.env.TUNNEL_STATE_DIR as string);
    expect([state.uid, state.gid, state.mode & 0o777]).toEqual([UID, UID, 0o700]);
    for (const d of [join(fx.root, 'run'), join(fx.root, 'config')]) {
      const s = await stat(d);
      expect([s.uid, s.gid]).toEqual([UID, UID]);
    }
  });

  it('hands an existing state dir with old files to PUID', async () => {
    const state = fx.env.TUNNEL_STATE_DIR as string;
    await mkdir(state, { mode: 0o755 });
    await writeFile(join(state, 'desired.json'), '{}');
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(0);
    expect((await stat(join(state, 'desired.json'))).uid).toBe(UID);
  });

  it('never re-owns an existing shared socket folder, and says when it cannot be written', async () => {
    const shared = join(fx.root, 'shared');
    await mkdir(shared, { mode: 0o755 });
    await writeFile(join(shared, 'other'), 'x');
    const r = await entrypoint({ ...fx.env, TUNNEL_SOCKET: join(shared, 'api.sock') });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`uid ${UID} cannot write ${shared}`);
    expect((await stat(shared)).uid).toBe(0);
  });

  it('exits with the daemon: exec leaves no shell between init and the process', async () => {
    await writeFile(join(fx.bin, 'tunnel-manager'), '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    const child = entrypoint(fx.env);
    // The entrypoint's own checks take a moment (longer on a loaded machine): the same
    // pid is the shell until it execs, then the daemon's program, never a child of it.
    const shown = async () => (await execa('ps', ['-o', 'comm=,uid=', '-p', String(child.pid)])).stdout.trim().split(/\s+/);
    let comm = await shown();
    for (let i = 0; i < 100 && comm[0] === 'sh'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      comm = await shown();
    }
    expect(comm).toEqual(['sleep', String(UID)]);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.signal).toBe('SIGTERM');
  });
});

describe('entrypoint: PUID and PGID', () => {
  it.each([
    [{ PUID: 'abc' }, "PUID must be a number (the output of 'id -u' on the host), got 'abc'"],
    [{ PUID: '-1' }, "PUID must be a number (the output of 'id -u' on the host), got '-1'"],
    [{ PGID: '1.5' }, "PGID must be a number (the output of 'id -g' on the host), got '1.5'"],
    [{ PUID: '0' }, 'PUID is 0 (root): tunnel-manager runs as an unprivileged user'],
    [{ SSH_DIR: undefined }, 'SSH_DIR is not set: it must name a path'],
    [{ TUNNEL_STATE_DIR: undefined }, 'TUNNEL_STATE_DIR is not set: it must name a path'],
  ])('%j fails clearly before running anything', async (patch, message) => {
    const r = await entrypoint({ ...fx.env, ...patch });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`entrypoint: ${message}`);
    expect(r.stdout).toBe('');
  });

  it('unset PUID and PGID default to 1000 as in autossh-tunnel-dockerized, each with a warning', async () => {
    for (const p of [fx.sshDir, fx.sshConfig, fx.key, `${fx.key}.pub`, join(fx.sshDir, 'known_hosts')]) await chown(p, 1000, 1000);
    for (const patch of [{ PUID: undefined, PGID: undefined }, { PUID: '', PGID: '' }]) {
      const r = await entrypoint({ ...fx.env, ...patch });
      expect(r.exitCode, JSON.stringify(patch)).toBe(0);
      expect(r.stdout).toContain('uid=1000 gid=1000');
      expect(r.stderr).toContain("entrypoint: warning: PUID is not set: using 1000 (the default of autossh-tunnel-dockerized); set PUID to the uid that owns the SSH directory (run 'id -u' on the host)");
      expect(r.stderr).toContain("entrypoint: warning: PGID is not set: using 1000 (the default of autossh-tunnel-dockerized); set PGID to that user's group (run 'id -g' on the host)");
    }
  });

  it('reads "04242" as uid 4242, not as octal', async () => {
    const r = await entrypoint({ ...fx.env, PUID: '04242', PGID: '04242' });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`uid=${UID} gid=${UID}`);
  });

  it('started without root (docker run --user): runs as is when PUID agrees, refuses when not', async () => {
    const asUser = (env: Record<string, string>) =>
      execa('setpriv', [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', 'sh', ENTRYPOINT], {
        env, extendEnv: false, reject: false,
      });
    // As in the Kubernetes example, the state and socket folders are volumes that exist.
    for (const d of [fx.env.TUNNEL_STATE_DIR as string, join(fx.root, 'run')]) {
      await mkdir(d, { mode: 0o700 });
      await chown(d, UID, UID);
    }
    const ok = await asUser(fx.env);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toBe(`uid=${UID} gid=${UID} groups=${UID} args=`);
    const bad = await asUser({ ...fx.env, PUID: '4243' });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(`the container runs as uid ${UID} but PUID is 4243`);
  });
});

describe('entrypoint: the SSH directory', () => {
  const lines = (where: string, what: string, fix: string) => `- ${where}: ${what}\n  fix: ${fix}\n`;

  it('starts with what ssh accepts (a 755 folder, a 644 config) and says how to make it private', async () => {
    await chmod(fx.sshDir, 0o755);
    await chmod(fx.sshConfig, 0o644);
    await chmod(`${fx.key}.pub`, 0o664);
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`uid=${UID}`);
    expect(r.stderr).toContain(`entrypoint: warning: the SSH directory ${fx.sshDir} works (ssh accepts these); to make it private, run on the host:\n`);
    expect(r.stderr).toContain(lines(fx.sshDir, 'mode is 755; ssh accepts it, 700 keeps the folder private', `chmod 700 ${fx.sshDir}`));
    expect(r.stderr).toContain(lines(fx.sshConfig, 'mode is 644; ssh accepts it, 600 keeps it private', `chmod 600 ${fx.sshConfig}`));
    expect(r.stderr).toContain(
      lines(`${fx.key}.pub`, 'mode is 664; ssh accepts it, but others should not write it (644 is fine for public keys and known_hosts)', `chmod 644 ${fx.key}.pub`),
    );
    expect(r.stderr).not.toContain('is not usable');
  });

  it('refuses what ssh refuses, every one at once: a readable private key, a config others can write', async () => {
    await chmod(fx.sshConfig, 0o664);
    await chmod(fx.key, 0o640);
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`entrypoint: the SSH directory ${fx.sshDir} is not usable (ssh refuses these); run on the host:\n`);
    expect(r.stderr).toContain(lines(fx.sshConfig, 'mode is 664: ssh refuses a config file that group or others can write', `chmod 600 ${fx.sshConfig}`));
    expect(r.stderr).toContain(lines(fx.key, 'mode is 640: ssh refuses a private key that group or others can read', `chmod 600 ${fx.key}`));
    // known_hosts at 644 and id_test.pub's readability are fine.
    expect(r.stderr).not.toContain(`${join(fx.sshDir, 'known_hosts')}:`);
  });

  it('names the owner problem and suggests PUID when the folder belongs to another uid', async () => {
    const r = await entrypoint({ ...fx.env, PUID: '4243' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(lines(fx.sshDir, 'owned by uid 4242, not by uid 4243 (the user tunnel-manager runs as)', `sudo chown 4243 ${fx.sshDir}`));
    expect(r.stderr).toContain(
      lines(fx.sshConfig, 'owned by uid 4242: ssh refuses a config file owned by another user than uid 4243 or root', `sudo chown 4243 ${fx.sshConfig}`),
    );
    expect(r.stderr).toContain('entrypoint: if uid 4242 is your user on the host, set PUID=4242 instead of changing owners.');
  });

  it('wants a config file', async () => {
    await rm(fx.sshConfig);
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      lines(fx.sshConfig, 'the SSH config file does not exist (tunnels take host names, users and keys from it)', `touch ${fx.sshConfig} && chmod 600 ${fx.sshConfig}`),
    );
  });

  it('starts without an SSH directory (ssh needs none until a tunnel runs), with a warning naming what to mount', async () => {
    await rm(fx.sshDir, { recursive: true });
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`uid=${UID} gid=${UID} groups=${UID} args=`);
    expect(r.stderr).toContain(
      `entrypoint: warning: the SSH directory ${fx.sshDir} does not exist: starting without it; tunnels cannot run until it is there (ssh takes host names, users and keys from ${fx.sshConfig}): mount your SSH directory there read-only, e.g. -v ~/.ssh:${fx.sshDir}:ro (docs/docker.md)\n`,
    );
    expect(r.stderr).not.toContain('is not usable');
    expect(r.stderr).not.toContain('the SSH config file does not exist');
    // The host's path in the words, and with daemon flags too.
    const host = await entrypoint({ ...fx.env, SSH_DIR_HOST: '/home/me/.ssh' }, ['--listen', '127.0.0.1:9']);
    expect(host.exitCode).toBe(0);
    expect(host.stderr).toContain('warning: the SSH directory /home/me/.ssh does not exist: starting without it');
    // An SSH directory that is there is still judged: a missing config in it is refused.
    await mkdir(fx.sshDir, { mode: 0o700 });
    await chown(fx.sshDir, UID, UID);
    const empty = await entrypoint(fx.env);
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain('the SSH config file does not exist');
  });

  it('a path that is there but not a folder is still refused', async () => {
    await rm(fx.sshDir, { recursive: true });
    await writeFile(fx.sshDir, '');
    const r = await entrypoint(fx.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`- ${fx.sshDir}: is not a directory`);
  });

  it('speaks of the host path (SSH_DIR_HOST) and quotes paths with spaces', async () => {
    await chmod(fx.sshDir, 0o750);
    const odd = join(fx.sshDir, 'my key');
    await writeFile(odd, readFileSync(fx.key), { mode: 0o604 });
    await chmod(odd, 0o604);
    await chown(odd, UID, UID);
    const r = await entrypoint({ ...fx.env, SSH_DIR_HOST: '~/.ssh' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(lines('~/.ssh', 'mode is 750; ssh accepts it, 700 keeps the folder private', 'chmod 700 ~/.ssh'));
    expect(r.stderr).toContain("  fix: chmod 600 ~/'.ssh/my key'\n");
    expect(r.stderr).not.toContain(fx.sshDir);
  });

  it('leaves the SSH directory to `check` and ignores it for panel, proxy and migrate', async () => {
    await chmod(fx.sshDir, 0o755);
    for (const cmd of ['check', 'panel', 'proxy', 'migrate']) {
      const r = await entrypoint(fx.env, [cmd]);
      expect(r.exitCode, cmd).toBe(0);
      expect(r.stdout).toBe(`uid=${UID} gid=${UID} groups=${UID} args=${cmd}`);
    }
  });
});
