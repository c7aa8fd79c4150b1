// Interactive tunnels in the web panel (SPEC §13, §8): headless Chromium logs in to a
// 2FA bastion through the page's terminal (xterm.js), bridged by the panel to the
// built daemon, whose token stays in the panel. Also the panel's guards on that
// WebSocket, one terminal at a time, and a lost connection shown live.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLI, echoServer, port, REPO, roundTrip, type Daemon } from '../daemon-harness.js';
import { cliInPty, containsCode, interactiveEntry, recordEvents, startInteractiveDaemon } from '../interactive-harness.js';
import { startOtpSshd, type OtpSshd } from '../otp-sshd.js';
import { seriousViolations } from '../axe.js';
import { startPanelProcess, type Panel } from '../panel-process.js';

const TOKEN = 'daemon-token-never-in-the-browser';
const PASSWORD = 'panel password';
const run = promisify(execFile);

/** The status a plain WebSocket client gets when the panel refuses its upgrade. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', reject);
  });
}

describe('logging in to an interactive tunnel from the panel', () => {
  let server: OtpSshd;
  let echo: { close(): Promise<void> };
  let localPort: number;
  let mirrorPort: number;
  let d: Daemon;
  let panel: Panel;
  let browser: Browser;
  let page: Page;
  let hash: string;
  let events: { text(): string; close(): void };
  const frames: string[] = [];
  const typed: string[] = [];

  const api = (path: string) => d.api(path, { headers: { authorization: `Bearer ${TOKEN}` } });
  const card = () => page.locator('#tunnels [data-testid="tunnel"][data-name="bastion"]');
  const badge = () => card().locator('[data-testid="status"]');
  const screen = () => page.locator('#terminal-screen .xterm-rows').textContent();

  beforeAll(async () => {
    mkdirSync(join(REPO, 'test-artifacts', 'panel'), { recursive: true });
    server = await startOtpSshd();
    const echoPort = await port();
    echo = await echoServer(echoPort);
    localPort = await port();
    mirrorPort = await port();
    // Two interactive tunnels to one host: they share its login (SPEC §14).
    d = await startInteractiveDaemon(server, interactiveEntry('bastion', echoPort, localPort) + interactiveEntry('mirror', echoPort, mirrorPort), { TUNNEL_API_TOKEN: TOKEN });
    hash = ((await (await api('/list')).json()) as { hash: string }[])[0]!.hash;
    events = await recordEvents({ ...d, api: (path: string, init?: RequestInit) => d.api(path, { ...init, headers: { authorization: `Bearer ${TOKEN}` } }) } as Daemon);
    panel = await startPanelProcess(d, server.sshConfigPath, { PANEL_TOKEN: PASSWORD, TUNNEL_API_TOKEN: TOKEN });
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('websocket', (ws) => {
      ws.on('framereceived', (f) => frames.push(String(f.payload)));
      ws.on('framesent', (f) => frames.push(String(f.payload)));
    });
  });

  afterAll(async () => {
    events?.close();
    await browser?.close();
    await panel?.stop();
    await d?.cleanup();
    await echo?.close();
    await server?.cleanup();
  });

  it('Start shows that a login is needed; the terminal in the page takes the code and the tunnel runs', async () => {
    await page.goto(panel.url);
    await page.fill('#password', PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe('Stopped');
    await card().getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe('Login needed');
    expect(await card().locator('[data-testid="login-needed"]').isVisible()).toBe(true);

    await card().getByTestId('login').click();
    await expect.poll(() => page.locator('#terminal').isVisible()).toBe(true);
    await expect.poll(screen, { timeout: 15_000 }).toMatch(/Verification code:/);
    expect(await page.getByTestId('terminal-status').textContent()).toContain('One login for this host: it also brings up mirror.');
    // The terminal view passes the accessibility audit in both themes; its input is named.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const found = await seriousViolations(page);
      expect(found, `terminal ${scheme}: ${JSON.stringify(found, null, 1)}`).toEqual([]);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(REPO, 'test-artifacts', 'panel', `terminal-en-${scheme}-390.png`) });
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await page.locator('#terminal-screen textarea').getAttribute('aria-label')).toBe('Terminal input for bastion');
    const code = server.code();
    typed.push(code);
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('terminal-status').textContent(), { timeout: 15_000 }).toMatch(/Logged in/);
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe('Running');
    expect(await roundTrip(localPort, 'via the page')).toBe('via the page');
    // The one code brought up the other tunnel to the host too.
    await expect.poll(() => page.locator('#tunnels [data-testid="tunnel"][data-name="mirror"] [data-testid="status"]').textContent(), { timeout: 15_000 }).toBe('Running');
    expect(await roundTrip(mirrorPort, 'shared login')).toBe('shared login');
    await expect.poll(() => page.locator('#terminal').isVisible(), { timeout: 5_000 }).toBe(false);
  });

  it('a lost connection shows "Login needed" again without a reload', async () => {
    for (const pid of server.sessionPids()) process.kill(pid, 'SIGKILL');
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe('Login needed');
  });

  it('the terminal view in Arabic, right to left, passes the accessibility audit', async () => {
    await Promise.all([page.waitForEvent('load'), page.selectOption('#language', 'ar')]);
    await expect.poll(() => badge().getAttribute('data-state'), { timeout: 15_000 }).toBe('AUTH_REQUIRED');
    await card().getByTestId('login').click();
    await expect.poll(screen, { timeout: 15_000 }).toMatch(/Verification code:/);
    expect(await page.locator('#terminal-title').textContent()).toMatch(/^تسجيل الدخول: /);
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl');
    await page.emulateMedia({ colorScheme: 'dark' });
    const found = await seriousViolations(page);
    expect(found, JSON.stringify(found, null, 1)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(REPO, 'test-artifacts', 'panel', 'terminal-ar-dark-390.png') });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.locator('#terminal-screen textarea').focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#terminal').isVisible()).toBe(false);
    await Promise.all([page.waitForEvent('load'), page.selectOption('#language', 'en')]);
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe('Login needed');
  });

  it('one terminal at a time: the CLI is refused while the page\'s is open, and gets the login once it is closed', async () => {
    await card().getByTestId('login').click();
    await expect.poll(screen, { timeout: 15_000 }).toMatch(/Verification code:/);
    const refused = cliInPty(['--socket', d.socketPath, 'auth', hash]);
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toMatch(/another terminal/);

    // Escape closes the terminal even though the emulator takes every other key.
    await page.locator('#terminal-screen textarea').focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#terminal').isVisible()).toBe(false);
    const cli = cliInPty(['--socket', d.socketPath, 'auth', hash]);
    try {
      await cli.waitFor(/Verification code: /);
      const code = server.code();
      typed.push(code);
      cli.write(`${code}\r`);
      expect(await cli.exited).toBe(0);
    } finally {
      cli.kill();
    }
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe('Running');
  });

  it('the panel refuses a terminal from another origin or without a session', async () => {
    const url = `${panel.url.replace('http:', 'ws:')}/api/terminal/${hash}`;
    expect(await upgradeStatus(url, { origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(url, {})).toBe(403);
    expect(await upgradeStatus(url, { origin: panel.url })).toBe(401);
    // The daemon itself takes no terminal from a web page, token or not.
    const daemonUrl = `ws://127.0.0.1:${d.apiPort}/auth/${hash}`;
    expect(await upgradeStatus(daemonUrl, { origin: panel.url, authorization: `Bearer ${TOKEN}` })).toBe(403);
    expect(await upgradeStatus(daemonUrl, {})).toBe(401);
  });

  it('the daemon\'s token never reached the browser, and no code typed is in any log', async () => {
    await run(process.execPath, [CLI, '--socket', d.socketPath, 'stop-tunnel', hash]);
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.join('\n')).not.toContain(TOKEN);
    expect(await page.content()).not.toContain(TOKEN);
    const logs = JSON.stringify(await (await api(`/logs/${hash}`)).json());
    for (const c of typed) {
      expect(containsCode(d.stderr(), c)).toBe(false);
      expect(containsCode(panel.output(), c)).toBe(false);
      expect(containsCode(logs, c)).toBe(false);
      expect(containsCode(events.text(), c)).toBe(false);
    }
  });
});
