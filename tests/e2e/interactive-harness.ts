// Shared by the interactive tunnels' end-to-end tests: the built daemon against an
// sshd that asks for a one-time code, tunnel-cli run in a real pseudo-terminal, and
// a recorder of /events.
import { spawn as spawnPty, type IPty } from 'node-pty';
import { CLI, startDaemon, type Daemon } from './daemon-harness.js';
import type { OtpSshd } from './otp-sshd.js';

export const interactiveEntry = (name: string, remotePort: number, localPort: number) =>
  `  - name: ${name}\n    remote_host: testhost\n    remote_port: ${remotePort}\n    local_port: ${localPort}\n    direction: remote_to_local\n    interactive: true\n`;

export async function startInteractiveDaemon(server: OtpSshd, tunnels: string, env: Record<string, string> = {}): Promise<Daemon> {
  return startDaemon({ config: `tunnels:\n${tunnels}`, sshConfigPath: server.sshConfigPath, env });
}

/** tunnel-cli in a pseudo-terminal, as a person runs it. */
export interface CliInPty {
  output(): string;
  write(text: string): void;
  /** Resolves once `pattern` has appeared in the output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number>;
  kill(): void;
}

export function cliInPty(args: string[], env: Record<string, string> = {}): CliInPty {
  const proc: IPty = spawnPty(process.execPath, [CLI, ...args], { name: 'xterm-256color', cols: 100, rows: 30, env: { ...process.env, ...env } as Record<string, string> });
  let out = '';
  proc.onData((d) => (out += d));
  const exited = new Promise<number>((resolve) => proc.onExit(({ exitCode }) => resolve(exitCode)));
  let done = false;
  void exited.then(() => (done = true));
  return {
    output: () => out,
    write: (text) => proc.write(text),
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out)) {
        if (done) throw new Error(`tunnel-cli exited before ${pattern}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    exited,
    kill: () => {
      if (!done) proc.kill('SIGKILL');
    },
  };
}

/** Everything the daemon sends on /events from now on, as text. */
export async function recordEvents(d: Daemon): Promise<{ text(): string; close(): void }> {
  const ctrl = new AbortController();
  const res = await d.api('/events', { signal: ctrl.signal });
  let text = '';
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // aborted
    }
  })();
  return { text: () => text, close: () => ctrl.abort() };
}

/** True when the six digits appear on their own (not inside a longer number) in `text`. */
export function containsCode(text: string, code: string): boolean {
  return new RegExp(`(?<!\\d)${code}(?!\\d)`).test(text);
}
