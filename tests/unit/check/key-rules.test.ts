// ssh's rule for private keys and the kubelet's volume layout, as check, the daemon and
// the entrypoint apply them (tests/deploy/secret-keys.test.ts holds them against the
// real ssh; these are the cases around them).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isKubeletInternalName, isKubeletManaged } from '../../../src/check/kubelet-volume.js';
import { entryFindings, sshRefusesKey } from '../../../src/check/rules.js';

describe('sshRefusesKey: only the running user\'s own key, and only when group or others have any access', () => {
  it.each([
    [0o644, 0, 1500, false],
    [0o440, 0, 1500, false],
    [0o444, 0, 1500, false],
    [0o600, 1500, 1500, false],
    [0o400, 1500, 1500, false],
    [0o644, 1500, 1500, true],
    [0o640, 1500, 1500, true],
    [0o604, 1500, 1500, true],
    [0o620, 1500, 1500, true],
    [0o440, 0, 0, true],
    [0o400, 0, 0, false],
  ])('mode %o, owner %i, ssh as %i → refused: %s', (mode, owner, uid, refused) => {
    expect(sshRefusesKey(mode, owner, uid)).toBe(refused);
  });
});

describe('entryFindings in a Kubernetes volume', () => {
  it('names the manifest, never chmod, and gives no warning for what the manifest made', () => {
    const key = entryFindings('/home/tunnel/.ssh/id_ed25519', 'private-key', 0o644, 0, 0, 'kubelet');
    expect(key.warned).toEqual([]);
    expect(key.refused).toHaveLength(1);
    expect(key.refused[0]!.fix).toMatch(/^in the manifest, set defaultMode: 0400 on the Secret volume and no fsGroup/);
    expect(key.refused[0]!.what).toContain('owned by uid 0, the user ssh runs as');
    const config = entryFindings('/home/tunnel/.ssh/config', 'ssh-config', 0o666, 0, 911, 'kubelet');
    expect(config.refused.map((p) => p.fix)).toEqual(['in the manifest, set defaultMode: 0440 (or 0400) on the volume']);
    expect(entryFindings('/home/tunnel/.ssh', 'dir', 0o3777, 0, 911, 'kubelet')).toEqual({ refused: [], warned: [] });
    expect(entryFindings('/home/tunnel/.ssh/id_ed25519', 'private-key', 0o440, 0, 911, 'kubelet')).toEqual({ refused: [], warned: [] });
  });

  it('outside one, the same refusal is fixed with chmod', () => {
    expect(entryFindings('/home/me/.ssh/id_ed25519', 'private-key', 0o644, 1000, 1000).refused[0]!.fix).toBe('chmod 600 /home/me/.ssh/id_ed25519');
  });
});

describe('isKubeletManaged', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubelet-volume-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  // A Secret with a key at the top and one in a sub-folder (items: path: sub/key).
  const vol = join(root, 'vol');
  const stamp = '..2026_11_27_10_00_00.123456789';
  mkdirSync(join(vol, stamp, 'sub'), { recursive: true });
  writeFileSync(join(vol, stamp, 'id_ed25519'), 'k');
  writeFileSync(join(vol, stamp, 'sub', 'key'), 'k');
  symlinkSync(stamp, join(vol, '..data'));
  symlinkSync('..data/id_ed25519', join(vol, 'id_ed25519'));
  symlinkSync('..data/sub', join(vol, 'sub'));
  // A plain folder beside it, with a link out of it and a dangling one.
  const plain = join(root, 'plain');
  mkdirSync(plain);
  writeFileSync(join(plain, 'id_ed25519'), 'k');
  symlinkSync(join(vol, 'id_ed25519'), join(plain, 'via-secret'));
  symlinkSync(join(root, 'nowhere'), join(plain, 'dangling'));

  it.each([
    ['the volume folder', vol, true],
    ['a key as the Secret names it', join(vol, 'id_ed25519'), true],
    ['a key in a sub-folder of the Secret', join(vol, 'sub', 'key'), true],
    ['a plain folder', plain, false],
    ['a plain key', join(plain, 'id_ed25519'), false],
    ['a dangling link', join(plain, 'dangling'), false],
    ['a missing file', join(plain, 'missing'), false],
  ])('%s → %s', async (_what, path, managed) => {
    expect(await isKubeletManaged(path)).toBe(managed);
  });

  it("a link from a plain folder into a Secret is the Secret's file: chmod cannot change it either", async () => {
    expect(await isKubeletManaged(join(plain, 'via-secret'))).toBe(true);
  });

  it("skips the kubelet's own names only", () => {
    expect([stamp, '..data', '..data_tmp'].every(isKubeletInternalName)).toBe(true);
    expect(['.', '..', 'id_ed25519', '.hidden', 'config'].some(isKubeletInternalName)).toBe(false);
  });
});
