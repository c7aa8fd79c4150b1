// The reference implementation's own web panel (autossh-tunnel-dockerized v2.3.1: its
// Go server and its JS, built from its sources by scripts/lib/reference-panel.mjs)
// pointed at the built daemon, driven in headless Chromium the way a user drives it:
// the table lists our tunnels, its buttons start and stop them, its rows add, edit and
// delete tunnels, "save all" rewrites the list, and its detail page shows the logs.
// The daemon gets the panel's key as API_KEY, the reference's setting.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parse } from 'yaml';
// @ts-expect-error plain JS helper shared with scripts/test
import { buildReferencePanel } from '../../../scripts/lib/reference-panel.mjs';
import { port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'reference-panel-key';

let server: Sshd;
let d: Daemon;
let panel: ChildProcess;
let panelUrl: string;
let panelLog = '';
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

interface Status { hash: string; name: string; status: string; pid: number | null }
const statuses = () => d.json<Status[]>('/status', { headers: { authorization: `Bearer ${KEY}` } });
const byName = async (name: string) => (await statuses()).find((s) => s.name === name);
const waitState = (name: string, state: string) =>
  d.waitFor(`${name} ${state}`, async () => {
    const s = await byName(name);
    return s?.status === state ? s : undefined;
  });
const fileTunnels = () => (parse(readFileSync(d.configPath, 'utf8')) as { tunnels: Record<string, unknown>[] }).tunnels;

describe('the reference web panel against our daemon', () => {
  beforeAll(async () => {
    // Fails loudly (with what to install or set) when Go or the reference's sources are missing.
    const ref = buildReferencePanel() as { web: string; bin: string };
    server = await sshd();
    const local = await port();
    const config = `# tunnels for the reference panel\ntunnels:\n  - name: ref-db   # the first one\n    remote_host: ${server.alias}\n    remote_port: 22\n    local_port: "127.0.0.1:${local}"\n`;
    d = await startDaemon({ config, sshConfigPath: server.sshConfigPath, env: { API_KEY: KEY } });
    await d.waitFor('ref-db RUNNING', async () => (await byName('ref-db'))?.status === 'RUNNING');

    const panelPort = await port();
    panelUrl = `http://127.0.0.1:${panelPort}`;
    panel = spawn(ref.bin, [], {
      cwd: ref.web,
      env: { PATH: process.env.PATH ?? '', PORT: String(panelPort), API_BASE_URL: `http://127.0.0.1:${d.apiPort}`, API_KEY: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    panel.stdout?.on('data', (b) => (panelLog += String(b)));
    panel.stderr?.on('data', (b) => (panelLog += String(b)));
    await d.waitFor('the reference panel to answer', async () => (await fetch(`${panelUrl}/api/config/api`).catch(() => null))?.ok === true);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    // Its stop, restart and delete buttons ask for confirmation.
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    panel?.kill('SIGTERM');
    await d?.cleanup();
    await server?.stop();
  });

  const rows = () => page.locator('#tunnelTable tbody tr');
  const rowOf = (name: string) => rows().filter({ has: page.locator(`input[value="${name}"]`) });
  const icon = (name: string) => rowOf(name).locator('.status-indicator');

  it('lists our tunnels with their live status (GET /config, then /status)', async () => {
    await page.goto(panelUrl);
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => icon('ref-db').textContent(), { timeout: 15_000 }).toBe('check_circle');
    const cells = rowOf('ref-db').locator('input');
    expect(await cells.nth(1).inputValue()).toBe(server.alias);
    expect(await cells.nth(2).inputValue()).toBe('22');
  });

  // After a start or stop the page rebuilds its table (GET /config 1.5 s after the answer),
  // which would drop a row added meanwhile: the rows are marked, and the rebuild is seen
  // when no marked row is left.
  const markRows = () => rows().evaluateAll((trs) => trs.forEach((tr) => tr.setAttribute('data-before-rebuild', '')));
  const rebuilt = () => expect.poll(() => page.locator('#tunnelTable tbody tr[data-before-rebuild]').count(), { timeout: 15_000 }).toBe(0);

  it('stops and starts a tunnel with its buttons', async () => {
    const before = await byName('ref-db');
    await markRows();
    await rowOf('ref-db').locator('.stop-button').click();
    await waitState('ref-db', 'STOPPED');
    await rebuilt();
    await markRows();
    await rowOf('ref-db').locator('.start-button').click();
    const after = await waitState('ref-db', 'RUNNING');
    expect(after.pid).not.toBe(before?.pid);
    await rebuilt();
  });

  it('adds a tunnel from a new row (POST /config/new): written to the file, started by the daemon', async () => {
    const local = await port();
    await page.locator('#addRow').click();
    const row = rows().last();
    const inputs = row.locator('input');
    await inputs.nth(0).fill('ref-web');
    await inputs.nth(1).fill(server.alias);
    await inputs.nth(2).fill('22');
    await inputs.nth(3).fill(String(local));
    await row.locator('.save-row-button').click();
    await waitState('ref-web', 'RUNNING');
    expect(fileTunnels().map((t) => t.name)).toEqual(['ref-db', 'ref-web']);
    const text = readFileSync(d.configPath, 'utf8');
    expect(text).toContain('# tunnels for the reference panel');
    expect(text).toContain('# the first one');
  });

  it('edits a tunnel in its row (POST /config/<hash>): the new values reach the file and the daemon', async () => {
    await page.reload();
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(2);
    const local = await port();
    await rowOf('ref-web').locator('input').nth(3).fill(String(local));
    await rowOf('ref-web').locator('.save-row-button').click();
    await d.waitFor('the edited tunnel', async () => (await statuses()).find((s) => s.name === 'ref-web' && s.status === 'RUNNING' && String((s as unknown as { local_port: string }).local_port) === String(local)));
    expect(fileTunnels()[1]).toMatchObject({ name: 'ref-web', local_port: local });
  });

  it('its detail page shows the tunnel\'s ssh output (GET /logs/<hash>)', async () => {
    const h = (await byName('ref-db'))!.hash;
    const detail = await browser.newPage();
    await detail.goto(`${panelUrl}/tunnel-detail?hash=${h}`);
    await expect.poll(() => detail.locator('#logBox').textContent(), { timeout: 15_000 }).toMatch(/Authenticated to|Entering interactive session|debug1:/);
    await detail.close();
  });

  it('deletes a tunnel with its delete button (POST /config/<hash>/delete)', async () => {
    await page.reload();
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(2);
    await rowOf('ref-web').locator('.deleteRow').click();
    await d.waitFor('ref-web gone', async () => (await byName('ref-web')) === undefined);
    expect(fileTunnels().map((t) => t.name)).toEqual(['ref-db']);
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(1);
  });

  it('"save configuration" rewrites the list (POST /config) and keeps what did not change as written', async () => {
    const pid = (await byName('ref-db'))!.pid;
    await page.locator('#saveConfig').click();
    await expect.poll(() => page.locator('.message, .toast, [class*="message"]').filter({ hasText: /saved/i }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const text = readFileSync(d.configPath, 'utf8');
    expect(text).toContain('# the first one');
    expect((await byName('ref-db'))!.pid).toBe(pid);
    expect(pageErrors).toEqual([]);
    expect(panelLog).not.toMatch(/\[ERROR\]/);
  });
});
