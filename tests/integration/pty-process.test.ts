// The interactive ssh child on its own: a real ssh in a pseudo-terminal against a
// real sshd that asks for a one-time code. Its prompt reaches the terminal, its debug
// lines reach the log parser through -E, and what is typed reaches neither.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ptySpawn, type PtyChild } from '../../src/supervisor/process/pty-process.js';
import { sshArgs } from '../../src/tunnel/ssh-args.js';
import { startOtpSshd, type OtpSshd } from '../e2e/otp-sshd.js';
import { alive, echoServer, port, roundTrip, spec, tempDir, waitFor } from './supervisor-fixture.js';

let server: OtpSshd;
let dir: string;

beforeAll(async () => {
  server = await startOtpSshd();
  dir = tempDir('tm-pty-');
});
afterAll(async () => {
  await server?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function spawnTunnel(name: string, localPort: number, targetPort: number) {
  const t = spec({ name, remote_host: server.alias, remote_port: targetPort, local_port: localPort, direction: 'remote_to_local', interactive: true });
  const debugLog = join(dir, `${name}.log`);
  const args = sshArgs({ spec: t, mode: 'default', sshConfigPath: server.sshConfigPath, knownHostsFiles: [join(dir, 'known_hosts')], debugLog });
  const lines: string[] = [];
  let screen = '';
  const child: PtyChild = ptySpawn('ssh', args, (l) => lines.push(l));
  child.terminal.onData((t) => (screen += t));
  return { child, lines, screen: () => screen, args, debugLog };
}

describe('ssh in a pseudo-terminal', () => {
  it('shows the prompt on the terminal, takes the code, and reports the forward in its debug lines only', async () => {
    const echo = await echoServer();
    const local = await port();
    const { child, lines, screen, args, debugLog } = await spawnTunnel('ok', local, echo.port);
    try {
      expect(args).not.toContain('BatchMode=yes');
      expect(args).toContain('-E');
      await waitFor('the prompt', () => /Verification code: $/.test(screen()));
      expect(child.terminal.screen()).toMatch(/Verification code: $/);
      expect(screen()).not.toMatch(/debug1:/);
      const code = server.code();
      child.terminal.write(`${code}\r`);
      await waitFor('the forward', () => lines.some((l) => l.startsWith('debug1: Entering interactive session.')));
      expect(await roundTrip(local)).toBe(true);
      expect(lines.some((l) => l.startsWith('Authenticated to '))).toBe(true);
      expect(lines.join('\n')).not.toContain(code);
      expect(screen()).not.toContain(code);
      // Typing cleared the replay: nothing typed can be shown to a terminal that attaches later.
      expect(child.terminal.screen()).not.toContain(code);
      child.kill('SIGTERM');
      const exit = await child.exited;
      expect(exit.spawnError).toBeNull();
      expect(alive(child.pid as number)).toBe(false);
      expect(existsSync(debugLog)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      await echo.close();
    }
  });

  it('a wrong code three times ends ssh with the server\'s refusal in its debug lines', async () => {
    const { child, lines, screen } = await spawnTunnel('wrong', await port(), 9);
    for (let i = 1; i <= 3; i++) {
      await waitFor(`prompt ${i}`, () => (screen().match(/Verification code: /g) ?? []).length >= i);
      child.terminal.write(`${server.wrongCode()}\r`);
    }
    const exit = await child.exited;
    expect(exit.code).toBe(255);
    expect(lines.some((l) => /Permission denied \(keyboard-interactive\)/.test(l))).toBe(true);
  });
});
