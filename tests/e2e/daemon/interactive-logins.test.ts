// Every kind of interactive login (SPEC §13) through the built daemon and tunnel-cli in
// a real pseudo-terminal, against a real sshd: a key with a passphrase (ssh's `Enter
// passphrase` prompt), a password (sshd's PAM asks for it), and a login that needs no
// prompt at all that day (the key is enough). The one-time code is interactive-cli.test.ts.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS helper shared with the scripts
import { SSHD_BIN } from '../../../scripts/lib/sshd.mjs';
import { CLI, echoServer, port, roundTrip, sshd, type Daemon, type Sshd } from '../daemon-harness.js';
import { cliInPty, interactiveEntry, startInteractiveDaemon } from '../interactive-harness.js';

const run = promisify(execFile);
const PASSPHRASE = 'correct horse battery';
const PASSWORD = 'open sesame 42';

/** The tunnel named `name` in the daemon's /status. */
async function statusOf(d: Daemon, name: string): Promise<{ hash: string; status: string; pid: number | null; last_error: string | null }> {
  const all = (await (await d.api('/status')).json()) as { hash: string; name: string; status: string; pid: number | null; last_error: string | null }[];
  return all.find((t) => t.name === name)!;
}

/** A host block for the daemon's ssh config, to the server with `key`. */
function hostBlock(server: Sshd, alias: string, key: string, extra: string[] = []): string {
  return [`Host ${alias}`, '  HostName 127.0.0.1', `  Port ${server.port}`, `  User ${server.user}`, `  IdentityFile ${key}`, '  IdentitiesOnly yes', `  UserKnownHostsFile ${server.knownHosts}`, ...extra, ''].join('\n');
}

describe('interactive logins other than a one-time code', () => {
  let keyServer: Sshd;
  let passwordServer: Sshd & { cleanupPam(): void };
  let echo: { close(): Promise<void> };
  let echoPort: number;
  let d: Daemon;
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    keyServer = await sshd();
    // A key with a passphrase, which the server accepts.
    const passKey = join(keyServer.dir, 'pass_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-f', passKey]);
    appendFileSync(join(keyServer.dir, 'authorized_keys'), readFileSync(`${passKey}.pub`));
    passwordServer = await passwordSshd();

    const sshConfig = join(keyServer.dir, 'daemon_ssh_config');
    writeFileSync(
      sshConfig,
      hostBlock(keyServer, 'passkey', passKey) +
        hostBlock(keyServer, 'plainkey', keyServer.clientKey) +
        // Password only: no key is offered, the server takes none.
        [`Host passwordhost`, '  HostName 127.0.0.1', `  Port ${passwordServer.port}`, `  User ${passwordServer.user}`, '  PubkeyAuthentication no', `  UserKnownHostsFile ${passwordServer.knownHosts}`, ''].join('\n'),
      { mode: 0o600 },
    );
    echoPort = await port();
    echo = await echoServer(echoPort);
    for (const name of ['passphrase', 'password', 'noprompt']) ports[name] = await port();
    const entry = (name: string, host: string) => interactiveEntry(name, echoPort, ports[name]!).replace('remote_host: testhost', `remote_host: ${host}`);
    // No agent: the passphrase must be typed.
    d = await startInteractiveDaemon({ sshConfigPath: sshConfig } as never, entry('passphrase', 'passkey') + entry('password', 'passwordhost') + entry('noprompt', 'plainkey'), { SSH_AUTH_SOCK: '' });
  });

  afterAll(async () => {
    await d?.cleanup();
    await echo?.close();
    await keyServer?.kill();
    await passwordServer?.kill();
    passwordServer?.cleanupPam();
  });

  it('a key with a passphrase: auth shows ssh\'s prompt, takes the passphrase and returns 0 once RUNNING', async () => {
    const { hash } = await statusOf(d, 'passphrase');
    // Started first, as a person does who reads start-tunnel's advice; auth then shows the prompt already waiting.
    const started = await run(process.execPath, [CLI, '--socket', d.socketPath, 'start-tunnel', hash]);
    expect(started.stderr).toMatch(/waits for a login .*tunnel-cli auth/);
    const cli = cliInPty(['--socket', d.socketPath, 'auth', hash.slice(0, 8)]);
    try {
      await cli.waitFor(/Enter passphrase for key/);
      cli.write(`${PASSPHRASE}\r`);
      expect(await cli.exited).toBe(0);
      expect(cli.output()).toMatch(/logged in; the tunnel is RUNNING/);
    } finally {
      cli.kill();
    }
    expect((await statusOf(d, 'passphrase')).status).toBe('RUNNING');
    expect(await roundTrip(ports.passphrase!, 'behind a passphrase')).toBe('behind a passphrase');
    expect(d.stderr()).not.toContain(PASSPHRASE);
  });

  it('a password: auth shows the prompt, takes the password and returns 0 once RUNNING', async () => {
    const { hash } = await statusOf(d, 'password');
    const cli = cliInPty(['--socket', d.socketPath, 'auth', hash.slice(0, 8)]);
    try {
      await cli.waitFor(/password: ?$/im);
      cli.write(`${PASSWORD}\r`);
      expect(await cli.exited).toBe(0);
      expect(cli.output()).toMatch(/logged in; the tunnel is RUNNING/);
    } finally {
      cli.kill();
    }
    expect((await statusOf(d, 'password')).status).toBe('RUNNING');
    expect(await roundTrip(ports.password!, 'behind a password')).toBe('behind a password');
    expect(d.stderr()).not.toContain(PASSWORD);
  });

  it('no prompt that day: auth reports the login done (0), and start-tunnel waits until RUNNING instead of asking for auth', async () => {
    const { hash } = await statusOf(d, 'noprompt');
    for (let i = 0; i < 2; i++) {
      const cli = cliInPty(['--socket', d.socketPath, 'auth', hash.slice(0, 8)]);
      try {
        expect(await cli.exited, cli.output()).toBe(0);
        expect(cli.output()).toMatch(/RUNNING/);
      } finally {
        cli.kill();
      }
      expect((await statusOf(d, 'noprompt')).status).toBe('RUNNING');
      await run(process.execPath, [CLI, '--socket', d.socketPath, 'stop-tunnel', hash]);
    }
    const started = await run(process.execPath, [CLI, '--socket', d.socketPath, 'start-tunnel', hash]);
    expect(started.stderr, started.stderr + started.stdout).not.toMatch(/tunnel-cli auth/);
    expect(started.stdout).toMatch(/RUNNING/);
    expect((await statusOf(d, 'noprompt')).status).toBe('RUNNING');
    expect(await roundTrip(ports.noprompt!, 'no prompt')).toBe('no prompt');
  });
});

/**
 * An sshd that takes a password alone, checked by PAM (pam_exec with the typed password on
 * its stdin) behind a uniquely named sshd, as otp-sshd.ts does for one-time codes: the
 * machine's own accounts and passwords are never touched.
 */
async function passwordSshd(): Promise<Sshd & { cleanupPam(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-pw-'));
  const check = join(dir, 'check-password');
  writeFileSync(check, `#!/bin/sh\nread -r typed\n[ "$typed" = "${PASSWORD}" ]\n`, { mode: 0o700 });
  const program = join(dir, `tm-pw-${randomBytes(4).toString('hex')}`);
  symlinkSync(SSHD_BIN, program);
  const pamFile = join('/etc/pam.d', basename(program));
  writeFileSync(pamFile, [`auth required pam_exec.so expose_authtok quiet ${check}`, 'account required pam_permit.so', 'session required pam_permit.so', 'password required pam_deny.so', ''].join('\n'));
  const server = (await sshd({
    dir,
    program,
    sshdOptions: ['UsePAM yes', 'PasswordAuthentication yes', 'KbdInteractiveAuthentication no', 'AuthenticationMethods password', `PermitRootLogin ${userInfo().uid === 0 ? 'yes' : 'prohibit-password'}`],
  })) as Sshd & { cleanupPam(): void };
  server.cleanupPam = () => rmSync(pamFile, { force: true });
  return server;
}
