// The built panel (`tunnel-manager panel`) started as a user would start it, in front
// of a daemon started by daemon-harness.ts. Shared by the panel's browser tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { MAIN, port, type Daemon } from './daemon-harness.js';

/** A running panel: its URL and its output (stdout and stderr). */
export interface Panel {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts the panel in front of `d` (or of `api`, another URL, to see how it fails there). */
export async function startPanelProcess(d: Daemon, sshConfigPath: string, env: Record<string, string> = {}, api = `http://127.0.0.1:${d.apiPort}`): Promise<Panel> {
  const p = await port();
  let out = '';
  const child = spawn(
    process.execPath,
    [MAIN, 'panel', '--listen', `127.0.0.1:${p}`, '--config', d.configPath, '--api', api, '--ssh-config', sshConfigPath],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PANEL_TOKEN: '', TUNNEL_API_TOKEN: '', ...env } },
  );
  child.stdout!.on('data', (b) => (out += String(b)));
  child.stderr!.on('data', (b) => (out += String(b)));
  const url = `http://127.0.0.1:${p}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the panel exited (${child.exitCode}):\n${out}`);
    const ok = await fetch(`${url}/`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`the panel did not answer:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

