// The image's path: TUNNEL_USER names an account the entrypoint renumbers to
// PUID/PGID, because ssh needs a passwd entry for its uid. Run in a private mount
// namespace over a copy of /etc, so the machine's own accounts are never touched.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { ENTRYPOINT, UID, makeFixture, type Fixture } from './fixture.js';

let fx: Fixture;
let etc: string;
beforeEach(async () => {
  fx = await makeFixture();
  etc = join(fx.root, 'etc');
  await execa('cp', ['-a', '/etc', etc]);
  // An account that already has the uid: the renumbered one must still win.
  await appendFile(join(etc, 'passwd'), `squatter:x:${UID}:${UID}::/nonexistent:/usr/sbin/nologin\n`);
  await appendFile(join(etc, 'passwd'), 'tunnel:x:911:911::/home/tunnel:/usr/sbin/nologin\n');
  await appendFile(join(etc, 'group'), 'tunnel:x:911:\n');
});
afterEach(async () => {
  await fx.cleanup();
});

function inNamespace(env: Record<string, string>, args: string[]) {
  return execa(
    'unshare',
    ['-m', 'sh', '-c', 'mount --bind "$1" /etc && shift && exec sh "$@"', 'sh', etc, ENTRYPOINT, ...args],
    { env, extendEnv: false, reject: false },
  );
}

describe('entrypoint: the account', () => {
  it('renumbers TUNNEL_USER to PUID/PGID, so ssh finds the user and its home', async () => {
    const r = await inNamespace({ ...fx.env, TUNNEL_USER: 'tunnel' }, [
      'sh', '-c', 'id -un; id -u; id -g; echo "$HOME $USER"; ssh -G -F /dev/null -- somehost 2>/dev/null | grep "^user "',
    ]);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')).toEqual(['tunnel', String(UID), String(UID), '/home/tunnel tunnel', 'user tunnel']);
    const passwd = (await readFile(join(etc, 'passwd'), 'utf8')).split('\n');
    expect(passwd[0]).toMatch(/^root:/);
    expect(passwd[1]).toBe(`tunnel:x:${UID}:${UID}::/home/tunnel:/usr/sbin/nologin`);
    expect(passwd.filter((l) => l.startsWith('tunnel:'))).toHaveLength(1);
    expect(await readFile(join(etc, 'group'), 'utf8')).toContain(`\ntunnel:x:${UID}:\n`);
    expect(await readFile('/etc/passwd', 'utf8')).not.toContain('tunnel:x:');
  });

  it('fails clearly when TUNNEL_USER names no account', async () => {
    const r = await inNamespace({ ...fx.env, TUNNEL_USER: 'nobody-here' }, []);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("TUNNEL_USER is 'nobody-here' but /etc/passwd has no such account");
  });

  it('warns when PUID has no account and none may be renumbered', async () => {
    const r = await execa('sh', [ENTRYPOINT], { env: fx.env, extendEnv: false, reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`warning: uid ${UID} has no account in /etc/passwd and ssh refuses to run without one`);
  });
});
