// The ssh client config is live (SPEC §5): an edit counts without a daemon restart;
// jump hosts get the tunnel's safety options (no prompt, accept-new into the
// daemon's known_hosts, no shared master) and no ssh outlives the daemon; a jump
// host's own known_hosts file in the user's config is read for it; an IPv6
// destination in the form ssh takes.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configYaml, echoServer, port, recordEvents, roundTrip, sleep, sshChildren, sshd, startDaemon, statusOf, until, type Daemon, type Sshd } from './helpers.js';

let echoPort: number;
let echo: { close(): Promise<void> };
beforeAll(async () => {
  echoPort = await port();
  echo = await echoServer(echoPort);
});
afterAll(async () => {
  await echo?.close();
});

describe('an ssh config edit', () => {
  let first: Sshd;
  let moved: Sshd | null = null;
  let d: Daemon;
  let lPort: number;

  beforeAll(async () => {
    first = await sshd();
    lPort = await port();
    d = await startDaemon({
      sshConfigPath: first.sshConfigPath,
      config: configYaml({ db: { remote_host: first.alias, remote_port: echoPort, local_port: lPort, direction: 'remote_to_local' } }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await moved?.stop();
    await first?.stop();
  });

  it('a new Port is used at once, before the retry the daemon had scheduled against the old one', async () => {
    const before = await d.waitState('db', 'RUNNING');
    const events = await recordEvents(d);
    await first.stop();
    // Let the backoff grow, so that its next try is well ahead.
    const waiting = await until('db RETRYING with a retry at least 2 s ahead', async () => {
      const t = await statusOf(d, 'db');
      return t.status === 'RETRYING' && Date.parse(t.next_retry_at) - Date.now() > 2_000 ? t : undefined;
    }, 30_000);
    // The server comes back on another port; its ssh config file is rewritten to say so.
    const newPort = await port();
    moved = await sshd({ dir: first.dir, port: newPort });
    expect(readFileSync(first.sshConfigPath, 'utf8')).toContain(`Port ${newPort}`);
    const running = await d.waitState('db', 'RUNNING', 15_000);
    const runningAt = events.statuses('db').find((e) => e.data.status === 'RUNNING' && e.data.pid !== before.pid)!.at;
    expect(runningAt).toBeLessThan(Date.parse(waiting.next_retry_at));
    expect(running.pid).not.toBe(before.pid);
    expect(await roundTrip(lPort, 'moved')).toBe('moved');
    expect(d.stderr()).toMatch(/"event":"ssh_config_reread"/);
    events.close();
  });
});

describe('a ProxyJump chain through two sshd with ControlMaster auto in Host *', () => {
  let bastion: Sshd;
  let target: Sshd;
  let dir: string;
  let d: Daemon;
  let lPort: number;

  beforeAll(async () => {
    bastion = await sshd();
    target = await sshd();
    dir = mkdtempSync(join(tmpdir(), 'tm-jump-'));
    const user = userInfo().username;
    const host = (alias: string, s: Sshd, extra: string[] = []) =>
      [`Host ${alias}`, '  HostName 127.0.0.1', `  Port ${s.port}`, `  User ${user}`, `  IdentityFile ${s.clientKey}`, '  IdentitiesOnly yes', ...extra].join('\n');
    // A common config: connection sharing for every host, and keys nobody has seen yet.
    writeFileSync(
      join(dir, 'ssh_config'),
      [
        'Host *',
        '  ControlMaster auto',
        `  ControlPath ${dir}/cm-%C`,
        '  ControlPersist 60',
        `  UserKnownHostsFile ${dir}/known_hosts`,
        host('bastion', bastion),
        host('target', target, ['  ProxyJump bastion']),
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    lPort = await port();
    d = await startDaemon({
      sshConfigPath: join(dir, 'ssh_config'),
      config: configYaml({ jumped: { remote_host: 'target', remote_port: echoPort, local_port: lPort, direction: 'remote_to_local' } }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await bastion?.stop();
    await target?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('works without a prompt, accepts both new keys into the daemon\'s known_hosts, shares no master, and leaves no ssh behind', async () => {
    const t = await d.waitState('jumped', 'RUNNING', 20_000);
    expect(await roundTrip(lPort, 'via bastion')).toBe('via bastion');
    // The tunnel's ssh and the hop it spawned, both reading the daemon's config.
    const ssh = sshChildren(d.stateDir);
    expect(ssh).toContain(t.pid);
    expect(ssh.length).toBe(2);
    const knownHosts = readFileSync(join(d.stateDir, 'known_hosts'), 'utf8');
    expect(knownHosts).toContain(`[127.0.0.1]:${bastion.port}`);
    expect(knownHosts).toContain(`[127.0.0.1]:${target.port}`);
    expect(existsSync(join(dir, 'known_hosts'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith('cm-'))).toEqual([]);
    expect(bastion.log).toMatch(/Accepted publickey/);

    expect(await d.stop('SIGTERM')).toBe(0);
    await sleep(300);
    expect(sshChildren(d.stateDir)).toEqual([]);
    expect(sshChildren(dir)).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.startsWith('cm-'))).toEqual([]);
  });
});

describe('a bastion whose host key is pinned in its own known_hosts file in the user\'s config', () => {
  let bastion: Sshd;
  let target: Sshd;
  let dir: string;
  let d: Daemon;
  let rightPort: number;
  let wrongPort: number;

  beforeAll(async () => {
    bastion = await sshd();
    target = await sshd();
    dir = mkdtempSync(join(tmpdir(), 'tm-pinned-'));
    const user = userInfo().username;
    const pin = (keyFile: string) => `[127.0.0.1]:${bastion.port} ${readFileSync(keyFile, 'utf8').trim().split(' ').slice(0, 2).join(' ')}\n`;
    // The bastion's real host key, and a key it does not have (what a man in the middle would be checked against).
    writeFileSync(join(dir, 'bastion_pins'), pin(`${bastion.hostKey}.pub`));
    writeFileSync(join(dir, 'wrong_pins'), pin(`${bastion.otherKey}.pub`));
    const host = (alias: string, s: Sshd, extra: string[]) =>
      [`Host ${alias}`, '  HostName 127.0.0.1', `  Port ${s.port}`, `  User ${user}`, `  IdentityFile ${s.clientKey}`, '  IdentitiesOnly yes', ...extra].join('\n');
    writeFileSync(
      join(dir, 'ssh_config'),
      [
        host('bastion', bastion, [`  UserKnownHostsFile ${dir}/bastion_pins`]),
        host('mitm', bastion, [`  UserKnownHostsFile ${dir}/wrong_pins`]),
        host('target', target, ['  ProxyJump bastion']),
        // The hop's ssh matches Host against the host part of user@host:port.
        host('target-via-mitm', target, [`  ProxyJump ${user}@mitm:${bastion.port}`]),
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    [rightPort, wrongPort] = [await port(), await port()];
    d = await startDaemon({
      sshConfigPath: join(dir, 'ssh_config'),
      config: configYaml({
        pinned: { remote_host: 'target', remote_port: echoPort, local_port: rightPort, direction: 'remote_to_local' },
        mispinned: { remote_host: 'target-via-mitm', remote_port: echoPort, local_port: wrongPort, direction: 'remote_to_local' },
      }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await bastion?.stop();
    await target?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with the right key pinned: RUNNING, and the bastion is checked against the pin, not added to the daemon\'s known_hosts', async () => {
    await d.waitState('pinned', 'RUNNING', 20_000);
    expect(await roundTrip(rightPort, 'pinned')).toBe('pinned');
    const knownHosts = readFileSync(join(d.stateDir, 'known_hosts'), 'utf8');
    expect(knownHosts).toContain(`[127.0.0.1]:${target.port} `);
    expect(knownHosts).not.toContain(`[127.0.0.1]:${bastion.port} `);
    expect(readFileSync(join(d.stateDir, 'ssh_config'), 'utf8')).toContain(`Host "bastion"\n  UserKnownHostsFile "${join(d.stateDir, 'known_hosts')}" "${dir}/bastion_pins"\n`);
    expect(d.stderr()).not.toMatch(/jump_host_known_hosts_not_read/);
  });

  it('with a wrong key pinned: FAILED for the host key, never trusted on first use', async () => {
    const t = await d.waitState('mispinned', 'FAILED', 20_000);
    expect(t.last_error).toMatch(/^host key verification failed: /);
    expect(t.pid).toBeNull();
    expect(readFileSync(join(d.stateDir, 'known_hosts'), 'utf8')).not.toContain(`[127.0.0.1]:${bastion.port} `);
    await expect(roundTrip(wrongPort, 'x', '127.0.0.1', 500)).rejects.toThrow();
  });

  it('an edit that pins the right key for that hop is written for it at once; a start then runs', async () => {
    const cfg = join(dir, 'ssh_config');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace(`${dir}/wrong_pins`, `${dir}/bastion_pins`));
    const block = `Host "mitm"\n  UserKnownHostsFile "${join(d.stateDir, 'known_hosts')}" "${dir}/bastion_pins"\n`;
    // Read again because the file changed (before any start asks for it).
    await until('the daemon\'s ssh config to give mitm the new pins', () => readFileSync(join(d.stateDir, 'ssh_config'), 'utf8').includes(block), 10_000);
    const t = await statusOf(d, 'mispinned');
    expect(t.status).toBe('FAILED');
    expect((await d.api(`/start/${t.hash}`, { method: 'POST' })).status).toBe(200);
    await d.waitState('mispinned', 'RUNNING', 20_000);
    expect(await roundTrip(wrongPort, 'pinned again')).toBe('pinned again');
    expect(readFileSync(join(d.stateDir, 'known_hosts'), 'utf8')).not.toContain(`[127.0.0.1]:${bastion.port} `);
  });
});

describe('an IPv6 destination', () => {
  let server: Sshd;
  let d: Daemon;
  let plainPort: number;
  let userPort: number;

  beforeAll(async () => {
    server = await sshd({ sshdOptions: ['ListenAddress ::1'] });
    const cfg = join(server.dir, 'ssh_config_v6');
    writeFileSync(
      cfg,
      ['Host ::1', `  Port ${server.port}`, `  User ${server.user}`, `  IdentityFile ${server.clientKey}`, '  IdentitiesOnly yes', `  UserKnownHostsFile ${server.knownHosts}`, ''].join('\n'),
      { mode: 0o600 },
    );
    [plainPort, userPort] = [await port(), await port()];
    d = await startDaemon({
      sshConfigPath: cfg,
      config: configYaml({
        v6: { remote_host: '::1', remote_port: echoPort, local_port: plainPort, direction: 'remote_to_local' },
        v6user: { remote_host: `${server.user}@::1`, remote_port: echoPort, local_port: userPort, direction: 'remote_to_local' },
      }),
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await server?.stop();
  });

  it('"::1" and "user@::1" are accepted as ssh takes them, and carry data', async () => {
    await d.waitState('v6', 'RUNNING');
    await d.waitState('v6user', 'RUNNING');
    expect(await roundTrip(plainPort, 'six')).toBe('six');
    expect(await roundTrip(userPort, 'six again')).toBe('six again');
    expect(server.log).toMatch(/Connection from ::1 port/);
  });
});
