// runChecks against real folders and a real `ssh -G`.
import { afterEach, describe, expect, it } from 'vitest';
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkExitCode, formatReport, runChecks, type CheckReport } from '../../src/check/index.js';
import { formatProblem } from '../../src/check/report.js';
import { UID, entrypoint, makeFixture, type Fixture } from './fixture.js';

const fixtures: Fixture[] = [];
afterEach(async () => {
  for (const f of fixtures.splice(0)) await f.cleanup();
});

/** A fixture owned by this process (root here): ssh refuses a config owned by someone else. */
async function own(): Promise<Fixture> {
  const fx = await makeFixture(process.getuid?.() ?? 0);
  fixtures.push(fx);
  return fx;
}

// Each tunnel listens on its own port: two on one address make the file invalid.
const TUNNEL = (host: string, name = 'db', index = 0) =>
  `  - name: ${name}\n    remote_host: ${host}\n    remote_port: 5432\n    local_port: "127.0.0.1:${15432 + index}"\n    direction: remote_to_local\n`;

async function writeTunnels(fx: Fixture, ...hosts: string[]): Promise<string> {
  const path = join(fx.root, 'config.yaml');
  await writeFile(path, `tunnels:\n${hosts.map((h, i) => TUNNEL(h, `t${i}`, i)).join('')}`);
  return path;
}

function run(fx: Fixture, configPath: string, extra: Partial<Parameters<typeof runChecks>[0]> = {}): Promise<CheckReport> {
  return runChecks({
    configPath,
    sshConfigPath: fx.sshConfig,
    stateDir: join(fx.root, 'state'),
    sshBin: 'ssh',
    home: fx.root,
    agentSocket: null,
    ...extra,
  });
}

describe('runChecks', () => {
  it('passes a good setup and shows how each tunnel resolves', async () => {
    const fx = await own();
    const report = await run(fx, await writeTunnels(fx, 'testalias', 'alice@testalias'));
    expect(report.problems).toEqual([]);
    expect(checkExitCode(report)).toBe(0);
    expect(report.tunnels.map((t) => [t.remote_host, t.user, t.hostname, t.port])).toEqual([
      ['testalias', 'bob', '127.0.0.1', '2222'],
      ['alice@testalias', 'alice', '127.0.0.1', '2222'],
    ]);
    expect(report.tunnels[0]?.identities).toEqual([{ path: fx.key, usable: true }]);
    const text = formatReport(report);
    expect(text).toContain(`t0 (`);
    expect(text).toContain(`testalias -> bob@127.0.0.1:2222, keys: ${fx.key}`);
    expect(text).toMatch(/no problems found\n$/);
  });

  it('resolves each tunnel with its own ssh_options (Port, User), as the daemon\'s ssh will', async () => {
    const fx = await own();
    const path = join(fx.root, 'config.yaml');
    await writeFile(
      path,
      'tunnels:\n' +
        '  - name: moved\n    remote_host: testalias\n    remote_port: 5432\n    local_port: 15432\n    direction: remote_to_local\n' +
        '    ssh_options: { Port: 2200, User: carol }\n' +
        '  - name: exposed\n    remote_host: testalias\n    remote_port: 8080\n    local_port: 18080\n    direction: local_to_remote\n' +
        '    health_check: { type: tcp }\n',
    );
    const report = await run(fx, path);
    expect(report.problems).toEqual([]);
    expect(report.tunnels.map((t) => [t.name, t.user, t.port])).toEqual([
      ['moved', 'carol', '2200'],
      ['exposed', 'bob', '2222'],
    ]);
    expect(formatReport(report)).toContain('testalias -> carol@127.0.0.1:2200');
    // -R on the server's loopback: nothing the daemon can connect to, said up front.
    expect(report.notes.join('\n')).toMatch(/tunnel "exposed": its health_check will not run: .*-R forward/);
  });

  it('refuses what ssh refuses and warns about what it accepts, the same lines as the entrypoint', async () => {
    const fx = await makeFixture(UID);
    fixtures.push(fx);
    await chmod(fx.sshDir, 0o755);
    await chmod(fx.sshConfig, 0o664);
    await chmod(fx.key, 0o640);
    await chmod(`${fx.key}.pub`, 0o666);
    await mkdir(join(fx.root, 'state'));
    await chown(join(fx.root, 'state'), UID, UID);
    const report = await run(fx, join(fx.root, 'missing.yaml'), { uid: UID, hostSshDir: '~/.ssh' });
    expect(report.problems).toEqual([
      { where: '~/.ssh/config', what: 'mode is 664: ssh refuses a config file that group or others can write', fix: 'chmod 600 ~/.ssh/config' },
      { where: '~/.ssh/id_test', what: 'mode is 640: ssh refuses a private key that group or others can read', fix: 'chmod 600 ~/.ssh/id_test' },
    ]);
    expect(report.warnings).toEqual([
      { where: '~/.ssh', what: 'mode is 755; ssh accepts it, 700 keeps the folder private', fix: 'chmod 700 ~/.ssh' },
      {
        where: '~/.ssh/id_test.pub',
        what: 'mode is 666; ssh accepts it, but others should not write it (644 is fine for public keys and known_hosts)',
        fix: 'chmod 644 ~/.ssh/id_test.pub',
      },
    ]);
    expect(checkExitCode(report)).toBe(1);
    expect(report.notes.join('\n')).toContain('does not exist yet: the daemon starts with no tunnels');

    const shell = await entrypoint({ ...fx.env, SSH_DIR_HOST: '~/.ssh' });
    expect(shell.exitCode).toBe(1);
    const [warned, refused] = shell.stderr.split('is not usable');
    const items = (text = '') => text.split('\n').filter((l) => l.startsWith('- ') || l.startsWith('  fix: ')).join('\n');
    expect(items(warned)).toBe(report.warnings.map(formatProblem).join('\n'));
    expect(items(refused)).toBe(report.problems.map(formatProblem).join('\n'));
    expect(formatReport(report)).toContain(`2 problems found; run or do this, then check again:\n${report.problems.map(formatProblem).join('\n')}\n`);
    expect(formatReport(report)).toContain(`2 warnings (ssh accepts these; the fix makes them private):\n${report.warnings.map(formatProblem).join('\n')}\n`);
  });

  it('a 755 folder and a 644 config are warnings only: check passes, as ssh does', async () => {
    const fx = await makeFixture(UID);
    fixtures.push(fx);
    await chmod(fx.sshDir, 0o755);
    await chmod(fx.sshConfig, 0o644);
    await mkdir(join(fx.root, 'state'));
    await chown(join(fx.root, 'state'), UID, UID);
    const report = await run(fx, join(fx.root, 'missing.yaml'), { uid: UID });
    expect(report.problems).toEqual([]);
    expect(report.warnings.map((w) => w.fix)).toEqual([`chmod 700 ${fx.sshDir}`, `chmod 600 ${fx.sshConfig}`]);
    expect(checkExitCode(report)).toBe(0);
  });

  it('reports a wrong owner and a missing SSH config file like the entrypoint', async () => {
    const fx = await makeFixture(UID);
    fixtures.push(fx);
    const report = await run(fx, join(fx.root, 'missing.yaml'), { uid: 4243, sshConfigPath: join(fx.sshDir, 'nope') });
    const lines = report.problems.map(formatProblem);
    expect(report.warnings.map(formatProblem)[0]).toBe(`- ${fx.sshDir}: owned by uid 4242, not by uid 4243 (the user tunnel-manager runs as)\n  fix: sudo chown 4243 ${fx.sshDir}`);
    expect(lines.at(-2)).toBe(
      `- ${join(fx.sshDir, 'nope')}: the SSH config file does not exist (tunnels take host names, users and keys from it)\n` +
        `  fix: touch ${join(fx.sshDir, 'nope')} && chmod 600 ${join(fx.sshDir, 'nope')}`,
    );
    // The state dir's parent is root's 755 folder: uid 4243 could not create it.
    expect(lines.at(-1)).toContain(`the state directory does not exist and uid 4243 cannot create it in ${fx.root}`);
    const shell = await entrypoint({ ...fx.env, PUID: '4243', SSH_CONFIG: join(fx.sshDir, 'nope') });
    const refused = shell.stderr.split('is not usable')[1] ?? '';
    const shellLines = refused.split('\n').filter((l) => l.startsWith('- ') || l.startsWith('  fix: '));
    expect(shellLines.join('\n')).toBe(lines.slice(0, -1).join('\n'));
  });

  it('wants named identity files; default ones may be missing when an agent is set', async () => {
    const fx = await own();
    await writeFile(
      fx.sshConfig,
      'Host named\n  HostName 127.0.0.1\n  IdentityFile ~/.ssh/missing_key\n\nHost defaults\n  HostName 127.0.0.1\n',
    );
    const named = await run(fx, await writeTunnels(fx, 'named'));
    expect(named.problems.map((p) => p.what)).toEqual([
      `IdentityFile ${fx.root}/.ssh/missing_key does not exist; correct the path in the SSH config, or create the key (without a passphrase: the daemon runs ssh with no one to type it) and install it on the server`,
    ]);
    expect(named.problems[0]?.fix).toBe(
      `mkdir -p -m 700 ${fx.root}/.ssh && { test -e ${fx.root}/.ssh/missing_key || ssh-keygen -q -t ed25519 -N '' -f ${fx.root}/.ssh/missing_key; } && ssh-copy-id -F ${fx.sshConfig} -i ${fx.root}/.ssh/missing_key named`,
    );

    const noAgent = await run(fx, await writeTunnels(fx, 'defaults'));
    expect(noAgent.problems).toHaveLength(1);
    expect(noAgent.problems[0]?.what).toMatch(/^no usable key: none of .*\/\.ssh\/id_rsa, .*\/\.ssh\/id_ed25519, .* exists and no SSH agent is set/);
    expect(noAgent.problems[0]?.where).toBe('tunnel "t0" (remote_host defaults)');

    const agent = await run(fx, await writeTunnels(fx, 'defaults'), { agentSocket: '/run/agent.sock' });
    expect(agent.problems).toEqual([]);
    expect(agent.tunnels[0]?.agent).toBe(true);
  });

  it('checks a key outside the SSH directory for mode 600', async () => {
    const fx = await own();
    const outside = join(fx.root, 'keys');
    await mkdir(outside);
    const key = join(outside, 'k');
    await writeFile(key, 'x', { mode: 0o644 });
    await writeFile(fx.sshConfig, `Host k\n  HostName 127.0.0.1\n  IdentityFile ${key}\n`);
    const report = await run(fx, await writeTunnels(fx, 'k'));
    expect(report.problems).toEqual([{ where: key, what: 'mode is 644: ssh refuses a private key that group or others can read', fix: `chmod 600 ${key}` }]);
  });

  it('notes a jump host it cannot name in the daemon\'s ssh config (its own known_hosts files go unread)', async () => {
    const fx = await own();
    await writeFile(fx.sshConfig, `Host viajump\n  HostName 10.0.0.5\n  IdentityFile ${fx.key}\n  ProxyJump ops@jump*:2222,bastion\n`);
    const report = await run(fx, await writeTunnels(fx, 'viajump'));
    const notes = report.notes.join('\n');
    expect(notes).toContain('tunnel "t0" (remote_host viajump): jump host "ops@jump*:2222" (characters other than letters, digits and ._-: in the host name) cannot be named');
    expect(notes).toContain("it reads the daemon's known_hosts, ~/.ssh/known_hosts and ~/.ssh/known_hosts2 only");
    expect(notes).not.toContain('jump host "bastion"');
  });

  it('says when a host alias resolves to nothing, and when ssh rejects the config', async () => {
    const fx = await own();
    const report = await run(fx, await writeTunnels(fx, 'typo-alias.invalid'));
    expect(report.problems.map((p) => p.what)).toContain(
      'host name "typo-alias.invalid" does not resolve: add a Host typo-alias.invalid entry to the SSH config, with the server\'s address in place of ADDRESS',
    );
    await writeFile(fx.sshConfig, 'Bogusoption yes\n');
    const bad = await run(fx, await writeTunnels(fx, 'testalias'));
    expect(bad.problems).toEqual([
      { where: 'tunnel "t0" (remote_host testalias)', what: `ssh -G failed: ${fx.sshConfig}: line 1: Bad configuration option: bogusoption`, fix: null },
    ]);
  });

  it('reports an invalid config file through the config loader', async () => {
    const fx = await own();
    const path = join(fx.root, 'config.yaml');
    await writeFile(path, 'tunnels:\n  - remote_host: h\n    remote_port: 70000\n    local_port: 1\n    direction: sideways\n');
    const report = await run(fx, path);
    const mine = report.problems.filter((p) => p.where === path);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.map((p) => p.what).join('\n')).toMatch(/remote_port/);
    expect(mine.map((p) => p.what).join('\n')).toMatch(/direction/);
    expect(checkExitCode(report)).toBe(1);
  });

  it('wants a state directory of its own (which is also writable)', async () => {
    const fx = await own();
    const state = join(fx.root, 'state');
    await mkdir(state, { mode: 0o755 });
    const report = await run(fx, join(fx.root, 'missing.yaml'), { uid: UID, sshConfigPath: null, home: join(fx.root, 'nohome') });
    // Another account's folder: the daemon itself would refuse it (it could choose what the daemon signals).
    expect(report.problems).toEqual([
      {
        where: state,
        what: `the daemon refuses this state directory, which another account could write: ${state} belongs to uid ${process.getuid!()}, not to uid ${UID}, which runs the daemon`,
        fix: `sudo chown -R ${UID} ${state} && chmod -R go-w ${state} && chmod 700 ${state}`,
      },
    ]);
    expect(report.notes.join('\n')).toContain('no SSH config file and no');
  });
});
