// Every fix `tunnel-manager check` prints is run, as printed, by a shell on an account
// that has never used ssh (no ~/.ssh), and must do what it says. The remote half of a
// key fix (ssh-copy-id) runs for real but dry (-n -f): there is no server to copy to.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runChecks, type CheckReport } from '../../../src/check/index.js';
import { parseConfigText } from '../../../src/config/load.js';
import { MAIN } from '../daemon-harness.js';

const root = mkdtempSync(join(tmpdir(), 'tm-check-fixes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// ssh-copy-id with its dry-run flags put first; everything the fix gives it is checked by the real one.
const shims = join(root, 'bin');
mkdirSync(shims);
const realCopyId = execFileSync('sh', ['-c', 'command -v ssh-copy-id'], { encoding: 'utf8' }).trim();
writeFileSync(join(shims, 'ssh-copy-id'), `#!/bin/sh\nexec ${realCopyId} -n -f "$@"\n`);
chmodSync(join(shims, 'ssh-copy-id'), 0o755);
// The built command, as npm installs its bin.
writeFileSync(join(shims, 'tunnel-manager'), `#!/bin/sh\nexec ${process.execPath} ${MAIN} "$@"\n`);
chmodSync(join(shims, 'tunnel-manager'), 0o755);

function runFix(fix: string, home: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    // stdin closed: a fix that stops to ask (ssh-keygen before overwriting a key) fails.
    const child = execFile('sh', ['-c', fix], { env: { HOME: home, PATH: `${shims}:${process.env.PATH ?? ''}` }, timeout: 20_000 }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
    child.stdin?.end();
  });
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

const tunnel = (name: string, host: string, port: number) =>
  `  - name: ${name}\n    remote_host: ${host}\n    remote_port: ${port}\n    local_port: ${port + 10000}\n`;

// ssh reads ~/.ssh/config from the password database, not $HOME: an account without one
// is this machine's ssh told to read no user config.
const freshSsh = join(shims, 'ssh-fresh-account');
writeFileSync(freshSsh, '#!/bin/sh\nexec ssh -F /dev/null "$@"\n');
chmodSync(freshSsh, 0o755);

function check(home: string, configPath: string, sshConfigPath: string | null): Promise<CheckReport> {
  return runChecks({ configPath, sshConfigPath, stateDir: join(home, 'state'), sshBin: sshConfigPath === null ? freshSsh : 'ssh', home, agentSocket: null });
}

test('on an account without ~/.ssh, each fix runs as printed: one Host block per host, one key, folder 700, files 600', async () => {
  const home = join(root, 'fresh');
  mkdirSync(home);
  const config = join(root, 'fresh.yaml');
  writeFileSync(config, `tunnels:\n${tunnel('db', 'user@bastion.invalid', 5432)}${tunnel('cache', 'bastion.invalid', 6379)}${tunnel('web', 'web.invalid', 8080)}`);
  const report = await check(home, config, null);

  const hostFixes = report.problems.filter((p) => /Host bastion\.invalid/.test(p.what));
  expect(hostFixes).toHaveLength(1);
  expect(hostFixes[0]!.where).toBe('tunnel "db" (remote_host user@bastion.invalid); tunnel "cache" (remote_host bastion.invalid)');
  const fixes = report.problems.map((p) => p.fix);
  expect(fixes.every((f) => f !== null)).toBe(true);
  // Two Host blocks; the key installed for each of the three accounts (user@bastion,
  // bastion as the local user, web), made once: the later fixes keep the first's key.
  expect(fixes).toHaveLength(5);

  for (const fix of fixes) {
    const r = await runFix(fix!, home);
    expect(r.code, `${fix}\n${r.out}`).toBe(0);
  }
  const ssh = join(home, '.ssh');
  expect(mode(ssh)).toBe('700');
  expect(mode(join(ssh, 'config'))).toBe('600');
  expect(mode(join(ssh, 'id_ed25519'))).toBe('600');
  expect(statSync(join(ssh, 'id_ed25519.pub')).isFile()).toBe(true);
  const written = readFileSync(join(ssh, 'config'), 'utf8');
  expect(written.match(/^Host /gm)).toEqual(['Host ', 'Host ']);
  // ssh itself reads the blocks: the placeholder is the HostName of each alias.
  const g = execFileSync('ssh', ['-G', '-F', join(ssh, 'config'), 'bastion.invalid'], { encoding: 'utf8' });
  expect(g).toMatch(/^hostname address$/m);

  // Checked again with that file: the key is there, the folder is private; only the
  // placeholder is left, and the user is told to correct it, not to add another block.
  const again = await check(home, config, join(ssh, 'config'));
  expect(again.warnings).toEqual([]);
  expect(again.problems.map((p) => [p.what, p.fix])).toEqual([
    [`host name "address" (what the SSH config ${join(ssh, 'config')} gives as the HostName of bastion.invalid) does not resolve: correct that HostName`, null],
    [`host name "address" (what the SSH config ${join(ssh, 'config')} gives as the HostName of web.invalid) does not resolve: correct that HostName`, null],
  ]);
  expect(again.tunnels.map((t) => t.identities)).toEqual(Array(3).fill([{ path: join(ssh, 'id_ed25519'), usable: true }]));
});

test('an SSH config named with --ssh-config in a folder that does not exist: both fixes printed at once, and they work', async () => {
  const home = join(root, 'named');
  mkdirSync(home);
  const sshConfig = join(home, 'conf', 'ssh', 'config');
  const config = join(root, 'empty.yaml');
  writeFileSync(config, 'tunnels: []\n');
  const report = await check(home, config, sshConfig);
  expect(report.problems.map((p) => p.fix)).toEqual([`mkdir -p -m 700 ${join(home, 'conf', 'ssh')}`, `touch ${sshConfig} && chmod 600 ${sshConfig}`]);
  for (const p of report.problems) expect((await runFix(p.fix!, home)).code).toBe(0);
  expect(mode(join(home, 'conf', 'ssh'))).toBe('700');
  expect(mode(sshConfig)).toBe('600');
  const again = await check(home, config, sshConfig);
  expect(again.problems).toEqual([]);
});

test("a file YAML refuses, in a folder whose name a shell would expand: the migrate fix runs as printed and gives the reference's hash", async () => {
  const home = join(root, 'migrating');
  const folder = join(home, 'my $HOME `x`');
  mkdirSync(folder, { recursive: true });
  const config = join(folder, 'config.yaml');
  writeFileSync(config, `tunnels:\n${tunnel('*star', 'bastion', 6009)}`);
  const report = await check(home, config, '/dev/null');
  const fix = report.problems.find((p) => p.where === config && p.fix !== null)?.fix;
  expect(fix).toMatch(/^tunnel-manager migrate --config '.*' --write$/);
  const r = await runFix(fix!, home);
  expect(r.code, r.out).toBe(0);
  const loaded = parseConfigText(readFileSync(config, 'utf8'));
  if (loaded.kind !== 'ok') throw new Error(loaded.kind);
  // md5("*star|bastion|6009|16009|remote_to_local|false"), as the reference's parser computed it (name-forms.reference.tsv).
  expect(loaded.config.tunnels.map((t) => [t.name, t.hash])).toEqual([['*star', '2f77417b1743a7f46dd62caf5c32e17b']]);
});

test("in the container (SSH_DIR_HOST=~/.ssh, the host's folder mounted read-only), every fix names the host's paths and runs there", async () => {
  const container = join(root, 'container');
  const ssh = join(container, '.ssh');
  mkdirSync(ssh, { recursive: true, mode: 0o700 });
  writeFileSync(join(ssh, 'config'), 'Host web.invalid\n  IdentityFile ~/.ssh/work_key\n', { mode: 0o600 });
  const config = join(root, 'container.yaml');
  writeFileSync(config, `tunnels:\n${tunnel('web', 'web.invalid', 8080)}`);
  const report = await runChecks({ configPath: config, sshConfigPath: join(ssh, 'config'), stateDir: join(container, 'state'), sshBin: 'ssh', home: container, agentSocket: null, hostSshDir: '~/.ssh' });
  const fixes = report.problems.map((p) => p.fix);
  // The Host block and the named key (not a second, default key beside it).
  expect(fixes).toHaveLength(2);
  expect(JSON.stringify(report.problems)).not.toContain(container);
  expect(fixes.join('\n')).toContain('>> ~/.ssh/config');
  expect(fixes.join('\n')).toContain("ssh-keygen -q -t ed25519 -N '' -f ~/.ssh/work_key");
  // Run on the host, whose ~/.ssh does not exist yet.
  const host = join(root, 'host');
  mkdirSync(host);
  for (const fix of fixes) expect((await runFix(fix!, host)).code, fix!).toBe(0);
  expect(mode(join(host, '.ssh', 'work_key'))).toBe('600');
  expect(readFileSync(join(host, '.ssh', 'config'), 'utf8')).toBe('\nHost web.invalid\n  HostName ADDRESS\n');
});

test('many tunnels to one host that does not resolve: one problem, naming five of them and how many more', async () => {
  const home = join(root, 'many');
  mkdirSync(home);
  const config = join(root, 'many.yaml');
  writeFileSync(config, `tunnels:\n${Array.from({ length: 8 }, (_, i) => tunnel(`t${i}`, 'many.invalid', 7000 + i)).join('')}`);
  const report = await check(home, config, null);
  const host = report.problems.filter((p) => /Host many\.invalid/.test(p.what));
  expect(host.map((p) => p.where)).toEqual([`${[0, 1, 2, 3, 4].map((i) => `tunnel "t${i}" (remote_host many.invalid)`).join('; ')}; and 3 more like them`]);
});
