// Interactive tunnels from the terminal (SPEC §13): the built daemon, a real sshd that
// asks for a key and then a one-time code, and tunnel-cli auth run in a real
// pseudo-terminal as a person would. The codes typed must never appear in a log.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, sshPidsMentioning } from '../../integration/supervisor-fixture.js';
import { CLI, echoServer, port, roundTrip, type Daemon } from '../daemon-harness.js';
import { cliInPty, containsCode, interactiveEntry, recordEvents, startInteractiveDaemon } from '../interactive-harness.js';
import { startOtpSshd, type OtpSshd } from '../otp-sshd.js';

const TOKEN = 'tok-interactive-e2e';
const run = promisify(execFile);

describe('tunnel-cli auth against a 2FA bastion', () => {
  let server: OtpSshd;
  let echo: { close(): Promise<void> };
  let echoPort: number;
  let localPort: number;
  let d: Daemon;
  let hash: string;
  let events: { text(): string; close(): void };
  const typed: string[] = [];

  const api = (path: string, init: RequestInit = {}) =>
    d.api(path, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers as Record<string, string> | undefined) } });
  type Status = { hash: string; status: string; pid: number | null; last_error: string | null; connection: { id: string; pid: number | null; state: string } | null };
  const status = async () => ((await (await api('/status')).json()) as Status[]).find((s) => s.hash === hash)!;
  // The ssh at the prompt is the login it shares with other interactive tunnels to the
  // host (SPEC §14): the tunnel has no forward, no pid of its own, until that login is done.
  const loginPid = async () => {
    const s = await status();
    expect(s.pid).toBeNull();
    expect(s.connection).toMatchObject({ state: 'awaiting_login' });
    return s.connection!.pid as number;
  };
  const waitStatus = (state: string, timeoutMs = 20_000) =>
    d.waitFor(`bastion ${state}`, async () => {
      const s = await status();
      return s.status === state ? s : undefined;
    }, timeoutMs);
  const auth = (...extra: string[]) => cliInPty(['--socket', d.socketPath, 'auth', hash.slice(0, 8), ...extra]);
  const code = () => {
    const c = server.code();
    typed.push(c);
    return c;
  };

  beforeAll(async () => {
    server = await startOtpSshd();
    echoPort = await port();
    echo = await echoServer(echoPort);
    localPort = await port();
    d = await startInteractiveDaemon(server, interactiveEntry('bastion', echoPort, localPort), { TUNNEL_API_TOKEN: TOKEN });
    const list = (await (await api('/list')).json()) as { hash: string; name: string }[];
    hash = list.find((t) => t.name === 'bastion')!.hash;
    events = await recordEvents({ ...d, api } as Daemon);
  });

  afterAll(async () => {
    events?.close();
    await d?.cleanup();
    await echo?.close();
    await server?.cleanup();
  });

  it('never starts by itself; auth starts it, shows the prompt, takes the code and returns 0 once RUNNING', async () => {
    expect((await status()).status).toBe('STOPPED');
    const cli = auth();
    try {
      await cli.waitFor(/Ctrl-C detaches/);
      await cli.waitFor(/Verification code: /);
      expect((await status()).status).toBe('AUTH_REQUIRED');
      cli.write(`${code()}\r`);
      expect(await cli.exited).toBe(0);
      expect(cli.output()).toMatch(/RUNNING/);
    } finally {
      cli.kill();
    }
    expect((await status()).status).toBe('RUNNING');
    expect(await roundTrip(localPort, 'through the bastion')).toBe('through the bastion');
    expect(events.text()).toMatch(/"status":"AUTH_REQUIRED"/);
  });

  it('a lost connection goes back to AUTH_REQUIRED with an event, without a storm of logins, and a new login over --url works', async () => {
    const before = server.logins();
    const seen = events.text().length;
    for (const pid of server.sessionPids()) process.kill(pid, 'SIGKILL');
    await waitStatus('AUTH_REQUIRED');
    await d.waitFor('the AUTH_REQUIRED event', async () => /"status":"AUTH_REQUIRED"/.test(events.text().slice(seen)));
    // Three seconds without a person: at most the one fresh ssh waiting at its prompt.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(server.logins() - before).toBeLessThanOrEqual(1);
    expect((await status()).status).toBe('AUTH_REQUIRED');

    const noToken = cliInPty(['--url', `http://127.0.0.1:${d.apiPort}`, 'auth', hash]);
    expect(await noToken.exited).toBe(1);
    expect(noToken.output()).toMatch(/Bearer|token/i);

    const cli = cliInPty(['--url', `http://127.0.0.1:${d.apiPort}`, '--token', TOKEN, 'auth', hash]);
    try {
      await cli.waitFor(/Verification code: /);
      cli.write(`${code()}\r`);
      expect(await cli.exited).toBe(0);
    } finally {
      cli.kill();
    }
    await waitStatus('RUNNING');
    expect(await roundTrip(localPort, 'again')).toBe('again');
  });

  it('start-tunnel leaves it waiting for a login and says how; one terminal at a time; Ctrl-C detaches and the login waits', async () => {
    await run(process.execPath, [CLI, '--socket', d.socketPath, 'stop-tunnel', hash]);
    const started = await run(process.execPath, [CLI, '--socket', d.socketPath, 'start-tunnel', hash]);
    expect(started.stderr).toMatch(/waits for a login .*tunnel-cli auth/);
    expect((await status()).status).toBe('AUTH_REQUIRED');
    const first = auth();
    try {
      await first.waitFor(/Verification code: /);
      const pid = await loginPid();
      expect(pid).toBeGreaterThan(0);

      const second = auth();
      expect(await second.exited).toBe(1);
      expect(second.output()).toMatch(/another terminal/);

      first.write('\x03');
      expect(await first.exited).toBe(1);
      expect(first.output()).toMatch(/detached/);
      expect(alive(pid)).toBe(true);
      expect(await loginPid()).toBe(pid);

      const again = auth();
      try {
        // The prompt still shown is replayed to the terminal that attaches.
        await again.waitFor(/Verification code: /);
        again.write(`${code()}\r`);
        expect(await again.exited).toBe(0);
      } finally {
        again.kill();
      }
      expect((await status()).pid).toBe(pid);
    } finally {
      first.kill();
    }
  });

  it('a wrong code three times is a clear failure: FAILED, and no login is tried again behind the person\'s back', async () => {
    await run(process.execPath, [CLI, '--socket', d.socketPath, 'stop-tunnel', hash]);
    const before = server.logins();
    const cli = auth();
    try {
      for (let i = 1; i <= 3; i++) {
        await cli.waitFor(new RegExp(`(Verification code: [^]*){${i}}`));
        const wrong = server.wrongCode();
        typed.push(wrong);
        cli.write(`${wrong}\r`);
      }
      expect(await cli.exited).toBe(1);
    } finally {
      cli.kill();
    }
    expect(cli.output()).toMatch(/login failed: .*Permission denied/);
    const s = await waitStatus('FAILED');
    expect(s.last_error).toMatch(/Permission denied/);
    expect(s.pid).toBeNull();
    // No new login tried behind the person's back.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(server.logins() - before).toBe(1);
  });

  it('stop ends the waiting ssh, and no code typed appears in the daemon\'s output, /logs or /events', async () => {
    const cli = auth();
    await cli.waitFor(/Verification code: /);
    const pid = await loginPid();
    cli.write('\x03');
    await cli.exited;
    await run(process.execPath, [CLI, '--socket', d.socketPath, 'stop-tunnel', hash]);
    expect(alive(pid)).toBe(false);
    expect((await status()).status).toBe('STOPPED');

    const logs = JSON.stringify(await (await api(`/logs/${hash}`)).json());
    expect(logs).toMatch(/Verification|keyboard-interactive|Authenticated/);
    expect(typed.length).toBeGreaterThanOrEqual(6);
    for (const c of typed) {
      expect(containsCode(d.stderr(), c), `code ${c} in the daemon's output`).toBe(false);
      expect(containsCode(logs, c), `code ${c} in /logs`).toBe(false);
      expect(containsCode(events.text(), c), `code ${c} on /events`).toBe(false);
    }
  });

  it('the daemon\'s exit leaves no ssh behind, even one waiting at its prompt', async () => {
    const cli = auth();
    await cli.waitFor(/Verification code: /);
    const pid = await loginPid();
    expect(alive(pid)).toBe(true);
    expect(await d.stop('SIGTERM')).toBe(0);
    expect(await cli.exited).not.toBe(0);
    expect(alive(pid)).toBe(false);
    expect(sshPidsMentioning(d.stateDir)).toEqual([]);
  });
});
