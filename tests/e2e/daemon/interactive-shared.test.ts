// Interactive tunnels share their host's login (SPEC §13, §14): the built daemon, a real
// sshd that asks for a key and then a one-time code, and tunnel-cli auth in a real
// pseudo-terminal. One code brings every interactive tunnel to the host up; a tunnel
// added while that login lives needs none; the login's end sends them all back to
// AUTH_REQUIRED together; `shared: false` keeps a login of its own.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, sshPidsMentioning } from '../../integration/supervisor-fixture.js';
import { CLI, echoServer, port, roundTrip, startDaemon, type Daemon } from '../daemon-harness.js';
import { cliInPty, interactiveEntry, startInteractiveDaemon } from '../interactive-harness.js';
import { startOtpSshd, type OtpSshd } from '../otp-sshd.js';

const run = promisify(execFile);

interface Status {
  hash: string;
  name: string;
  status: string;
  pid: number | null;
  restarts: number;
  last_error: string | null;
  connection: { id: string; pid: number | null; state: string } | null;
}

describe('one login per host for interactive tunnels, against a 2FA bastion', () => {
  let server: OtpSshd;
  const echoes: { close(): Promise<void> }[] = [];
  const ports: Record<string, { echo: number; local: number }> = {};
  let d: Daemon;
  let config = '';

  const statuses = () => d.json<Status[]>('/status');
  const byName = async (name: string) => (await statuses()).find((s) => s.name === name)!;
  const entry = (name: string) => interactiveEntry(name, ports[name]!.echo, ports[name]!.local);
  const hashOf = async (name: string) => (await byName(name)).hash;
  /** `tunnel-cli <command> <hash of name>`. */
  const cli = async (command: string, name: string, ...extra: string[]) => run(process.execPath, [CLI, '--socket', d.socketPath, command, ...extra, await hashOf(name)]);
  /** `tunnel-cli auth <hash of name>` typing one valid code at the prompt; resolves to its exit code and what it showed. */
  const authWithCode = async (name: string) => {
    const auth = cliInPty(['--socket', d.socketPath, 'auth', (await hashOf(name)).slice(0, 8)]);
    try {
      await auth.waitFor(/Verification code: /);
      auth.write(`${server.code()}\r`);
      return { code: await auth.exited, output: auth.output() };
    } finally {
      auth.kill();
    }
  };
  const carries = async (name: string) => expect(await roundTrip(ports[name]!.local, `via ${name}`)).toBe(`via ${name}`);

  beforeAll(async () => {
    server = await startOtpSshd();
    for (const name of ['alpha', 'beta', 'gamma', 'own']) {
      const echo = await port();
      echoes.push(await echoServer(echo));
      ports[name] = { echo, local: await port() };
    }
    config = `tunnels:\n${entry('alpha')}${entry('beta')}${entry('own')}    shared: false\n`;
    d = await startInteractiveDaemon(server, config.slice('tunnels:\n'.length));
  });

  afterAll(async () => {
    await d?.cleanup();
    await Promise.all(echoes.map((e) => e.close()));
    await server?.cleanup();
  });

  it('two tunnels started wait for one login, named by their connection; one code through either brings both up', async () => {
    await cli('start-tunnel', 'alpha', '--no-wait');
    await cli('start-tunnel', 'beta', '--no-wait');
    const waiting = await d.waitFor('both waiting at one prompt', async () => {
      const [a, b] = [await byName('alpha'), await byName('beta')];
      return a.connection?.state === 'awaiting_login' && a.connection.pid !== null && b.status === 'AUTH_REQUIRED' ? [a, b] : undefined;
    });
    for (const s of waiting) expect(s).toMatchObject({ status: 'AUTH_REQUIRED', pid: null, connection: { id: waiting[0]!.connection!.id, state: 'awaiting_login' } });
    const before = server.logins();

    // The code is typed through beta; alpha comes up with it. One terminal at a time on
    // the one login, whichever tunnel it names.
    const auth = cliInPty(['--socket', d.socketPath, 'auth', (await hashOf('beta')).slice(0, 8)]);
    try {
      await auth.waitFor(/Verification code: /);
      const other = cliInPty(['--socket', d.socketPath, 'auth', (await hashOf('alpha')).slice(0, 8)]);
      expect(await other.exited).toBe(1);
      expect(other.output()).toMatch(/another terminal is attached to the login alpha shares with the other interactive tunnels to testhost/);
      expect(auth.output()).toMatch(/attached to the login of beta \(\w{8}\), shared with alpha; answer/);
      auth.write(`${server.code()}\r`);
      expect(await auth.exited).toBe(0);
    } finally {
      auth.kill();
    }
    const [a, b] = [await d.waitState('alpha', 'RUNNING'), await byName('beta')];
    expect(b.status).toBe('RUNNING');
    expect(a.pid).toBe(waiting[0]!.connection!.pid);
    expect(b.pid).toBe(a.pid);
    expect(a.connection).toMatchObject({ state: 'up', pid: a.pid });
    await carries('alpha');
    await carries('beta');
    expect(server.logins() - before).toBe(1);
  });

  it('a tunnel added to the file while the login lives starts RUNNING without a prompt; a restarted one too', async () => {
    const before = server.logins();
    const up = await byName('alpha');
    d.writeConfig(`${config}${entry('gamma')}`);
    const g = await d.waitState('gamma', 'RUNNING');
    expect(g.connection).toEqual(up.connection);
    await carries('gamma');

    await cli('restart-tunnel', 'beta');
    await d.waitState('beta', 'RUNNING');
    await carries('beta');

    // An edit that restarts a tunnel (a health_check added) keeps it on the same login.
    const restarts = (await byName('alpha')).restarts;
    config = config.replace(`    interactive: true\n`, `    interactive: true\n    health_check:\n      type: tcp\n      interval: 30\n`);
    d.writeConfig(`${config}${entry('gamma')}`);
    await d.waitFor('alpha restarted by the edit', async () => {
      const a = await byName('alpha');
      return a.restarts > restarts && a.status === 'RUNNING' ? a : undefined;
    });
    await carries('alpha');
    expect(server.logins() - before).toBe(0);
  });

  it('the login killed: every tunnel leaves RUNNING at once with the cause and waits for one fresh login; one code brings all back', async () => {
    const master = (await byName('alpha')).connection!.pid!;
    const before = server.logins();
    process.kill(master, 'SIGKILL');
    const down = await d.waitFor('all three back to AUTH_REQUIRED', async () => {
      const all = (await statuses()).filter((s) => s.name !== 'own');
      return all.every((s) => s.status === 'AUTH_REQUIRED') && all[0]!.connection?.state === 'awaiting_login' && all[0]!.connection.pid !== null ? all : undefined;
    });
    for (const s of down) {
      expect(s.last_error).toMatch(/connection|lost|ended/i);
      expect(s.pid).toBeNull();
    }
    expect(alive(master)).toBe(false);
    expect(new Set(down.map((s) => s.connection!.id)).size).toBe(1);
    // One fresh login waits at its prompt for the three: no login per tunnel, no loop.
    expect(server.logins() - before).toBeLessThanOrEqual(1);

    // That fresh login ends too, with no one at it: the three rest in AUTH_REQUIRED, no
    // ssh runs, and a person's login through any one of them brings all three back.
    process.kill(down[0]!.connection!.pid!, 'SIGKILL');
    await d.waitFor('the login down, no fresh one by itself', async () => {
      const all = (await statuses()).filter((s) => s.name !== 'own');
      return all.every((s) => s.status === 'AUTH_REQUIRED' && s.connection?.state === 'down' && s.connection.pid === null) || undefined;
    });
    const auth = cliInPty(['--socket', d.socketPath, 'auth', (await hashOf('gamma')).slice(0, 8)]);
    try {
      await auth.waitFor(/Verification code: /);
      // All three say they wait for this one login, though only gamma asked for it.
      const waiting = (await statuses()).filter((s) => s.name !== 'own');
      for (const s of waiting) expect(s).toMatchObject({ status: 'AUTH_REQUIRED', connection: { state: 'awaiting_login', pid: waiting[0]!.connection!.pid } });
      expect(waiting[0]!.connection!.pid).not.toBeNull();
      auth.write(`${server.code()}\r`);
      expect(await auth.exited).toBe(0);
    } finally {
      auth.kill();
    }
    for (const name of ['alpha', 'beta', 'gamma']) {
      await d.waitState(name, 'RUNNING');
      await carries(name);
    }
  });

  it('shared: false keeps a login of its own: it asks for its own code while the shared login is up', async () => {
    const own = await byName('own');
    expect(own.connection).toBeNull();
    await cli('start-tunnel', 'own', '--no-wait');
    await d.waitState('own', 'AUTH_REQUIRED');
    const before = server.logins();
    const login = await authWithCode('own');
    expect(login.code).toBe(0);
    expect(login.output).toMatch(/attached to the login of own \(\w{8}\); answer/);
    const s = await d.waitState('own', 'RUNNING');
    expect(s.pid).not.toBe((await byName('alpha')).pid);
    await carries('own');
    expect(server.logins() - before).toBe(1);
    // The shared login was not disturbed.
    await carries('alpha');
  });

  it('the daemon killed with -9 leaves no login behind once the next one has started', async () => {
    const master = (await byName('alpha')).connection!.pid!;
    expect(alive(master)).toBe(true);
    expect(await d.stop('SIGKILL')).toBeNull();
    const next = await startDaemon({ config: `${config}${entry('gamma')}`, sshConfigPath: server.sshConfigPath, dir: d.dir });
    try {
      await next.waitFor('the shared login gone', async () => !alive(master));
      expect(sshPidsMentioning(next.stateDir)).toEqual([]);
      // Nobody has logged in to the new daemon: every interactive tunnel waits for a person.
      expect((await next.json<Status[]>('/status')).map((s) => s.status)).not.toContain('RUNNING');
    } finally {
      await next.stop();
    }
  });
});
