// The built panel started in another folder than the daemon, without --config: it
// edits the file the daemon runs (which the daemon names), not a config/config.yaml of
// its own folder — where it said "No config file yet" and called every running tunnel
// one the file does not list.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { MAIN, port, startDaemon, type Daemon } from '../daemon-harness.js';

const TUNNEL = 'tunnels:\n  - name: db\n    remote_host: testhost\n    remote_port: 5432\n    local_port: 15432\n    interactive: true\n';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function panelIn(cwd: string, args: string[], env: Record<string, string> = {}) {
  const p = await port();
  let out = '';
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'panel', '--listen', `127.0.0.1:${p}`, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env },
  });
  child.stderr!.on('data', (b) => (out += String(b)));
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
  const deadline = Date.now() + 20_000;
  while (!out.includes('"event":"panel_started"')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the panel did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const config = async () => ((await (await fetch(`http://127.0.0.1:${p}/api/config`)).json()) as { config: { path: string; missing: boolean; entries: unknown[] } }).config;
  return { config, output: () => out };
}

async function daemon(): Promise<Daemon> {
  const d = await startDaemon({ config: TUNNEL, sshConfigPath: '/dev/null' });
  cleanups.push(() => d.cleanup());
  return d;
}

function elsewhere(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tm-panel-cwd-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('without --config or TUNNEL_CONFIG, started elsewhere: the daemon\'s file, and the log says where it came from', async () => {
  const d = await daemon();
  const cwd = elsewhere();
  const panel = await panelIn(cwd, ['--api', `http://127.0.0.1:${d.apiPort}`]);
  const c = await panel.config();
  expect(c.path).toBe(d.configPath);
  expect(c.missing).toBe(false);
  expect(c.entries).toHaveLength(1);
  expect(panel.output()).toContain(`"event":"panel_started","listen":`);
  expect(panel.output()).toContain(`"config":"${d.configPath}","config_from":"daemon"`);
});

test('a relative --config is taken from the panel\'s folder, made absolute, and a daemon running another file is named', async () => {
  const d = await daemon();
  const cwd = elsewhere();
  mkdirSync(join(cwd, 'mine'));
  writeFileSync(join(cwd, 'mine', 'c.yaml'), 'tunnels: []\n');
  const panel = await panelIn(cwd, ['--api', `http://127.0.0.1:${d.apiPort}`, '--config', 'mine/c.yaml']);
  expect((await panel.config()).path).toBe(join(cwd, 'mine', 'c.yaml'));
  expect(panel.output()).toContain(`"event":"panel_config_differs","config":"${join(cwd, 'mine', 'c.yaml')}","daemon_config":"${d.configPath}"`);
});

test('no daemon to ask: the default of its own folder, absolute, with a warning saying so', async () => {
  const cwd = elsewhere();
  const panel = await panelIn(cwd, ['--api', `http://127.0.0.1:${await port()}`]);
  expect((await panel.config()).path).toBe(join(cwd, 'config', 'config.yaml'));
  expect(panel.output()).toMatch(/"event":"panel_config_default".*could not ask the daemon at http:\/\/127\.0\.0\.1:\d+ which config file it runs/);
}, 30_000);
