// The web panel in a real headless Chromium, against the built daemon and a real
// sshd: live status, start/stop, add/edit/delete through the form, inline errors,
// conflicts with an edit on disk, login, and screenshots at phone and desktop width
// saved to test-artifacts/ for a person to look at.
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, echoServer, port, REPO, roundTrip, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';
import { startPanelProcess, type Panel } from '../panel-process.js';

/** The browser's globals that the page.evaluate callbacks below use: they run in Chromium, not in Node. */
declare const window: { marker?: number; scrollTo(x: number, y: number): void };
declare const document: {
  getElementById(id: string): { replaceChildren(): void } | null;
  documentElement: { scrollWidth: number };
};

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(REPO, 'test-artifacts');
const run = promisify(execFile);

const entry = (name: string, remote: string | number, local: string | number, direction: string) =>
  `  - name: ${name}\n    remote_host: testhost\n    remote_port: ${typeof remote === 'number' ? remote : `"${remote}"`}\n    local_port: ${local}\n    direction: ${direction}\n`;

describe('the web panel in Chromium', () => {
  let server: Sshd;
  let echo: { close(): Promise<void> };
  let echoPort: number;
  let d: Daemon;
  let panel: Panel;
  let browser: Browser;
  let page: Page;
  let bringPort: number;
  let exposePort: number;
  let addPort: number;
  const consoleErrors: string[] = [];

  const file = () => readFileSync(d.configPath, 'utf8');
  const card = (name: string) => page.locator(`#tunnels [data-testid="tunnel"][data-name="${name}"]`);
  const badge = (name: string) => card(name).locator('[data-testid="status"]');
  const hashOf = async (name: string) => (await card(name).getAttribute('data-hash')) as string;
  const cli = (...args: string[]) => run(process.execPath, [CLI, '--socket', d.socketPath, ...args], { timeout: 20_000 });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await sshd();
    echoPort = await port();
    echo = await echoServer(echoPort);
    bringPort = await port();
    exposePort = await port();
    addPort = await port();
    const config =
      '# Tunnels of the lab (kept by every save)\n' +
      'tunnels:\n' +
      '  # the echo service, brought here\n' +
      entry('bring', echoPort, bringPort, 'remote_to_local').replace('direction: remote_to_local', 'direction: remote_to_local   # -L in default mode') +
      '    owner: lab-team\n' +
      '\n' +
      '  # the echo service, exposed on the server\n' +
      entry('expose', `127.0.0.1:${exposePort}`, echoPort, 'local_to_remote') +
      '# end of tunnels\n';
    d = await startDaemon({ config, sshConfigPath: server.sshConfigPath });
    await d.waitState('bring', 'RUNNING');
    await d.waitState('expose', 'RUNNING');
    panel = await startPanelProcess(d, server.sshConfigPath);
    // launch() gives every run a fresh temporary profile (user-data-dir).
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('console', (m) => {
      // The 400 and 409 answers the tests provoke are logged by Chromium too; only script errors count.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
  });

  afterAll(async () => {
    await browser?.close();
    await panel?.stop();
    await d?.cleanup();
    await echo?.close();
    await server?.stop();
  });

  it('shows every tunnel with its direction in words and live RUNNING status', async () => {
    await page.goto(panel.url);
    await expect.poll(() => page.locator('[data-testid="tunnel"]').count()).toBe(2);
    await expect.poll(() => badge('bring').textContent()).toBe('Running');
    await expect.poll(() => badge('expose').textContent()).toBe('Running');
    expect(await card('bring').locator('[data-testid="description"]').textContent()).toBe(`bring testhost:${echoPort} to local :${bringPort}`);
    expect(await card('expose').locator('[data-testid="description"]').textContent()).toBe(`expose local :${echoPort} on testhost:${exposePort} (bound to 127.0.0.1)`);
    expect(await page.locator('#daemon-state').textContent()).toContain('Daemon connected');
    // Health beside the state: what the forward carries, not only that it is up.
    await expect.poll(() => card('bring').locator('[data-testid="health"]').textContent()).toBe('Health: ok');
    const html = await page.content();
    expect(html).not.toContain('TUNNEL_API_TOKEN=');
  });

  it('a tunnel stopped from the CLI turns STOPPED on the page without a reload; Start brings it back', async () => {
    const hash = await hashOf('bring');
    expect(hash).toMatch(/^[0-9a-f]{32}$/);
    await page.evaluate(() => (window.marker = 42));
    await cli('stop-tunnel', hash);
    await expect.poll(() => badge('bring').textContent(), { timeout: 10_000 }).toBe('Stopped');
    // The same page, not a reload: the marker set above is still there.
    expect(await page.evaluate(() => window.marker)).toBe(42);
    await card('bring').getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => badge('bring').textContent(), { timeout: 15_000 }).toBe('Running');
    expect(await roundTrip(bringPort, 'after restart')).toBe('after restart');
  });

  it("an action's answer overtaken by the live stream does not cover it: Start's STARTING arriving after RUNNING leaves Running", async () => {
    const hash = await hashOf('bring');
    await cli('stop-tunnel', hash);
    await expect.poll(() => badge('bring').textContent(), { timeout: 10_000 }).toBe('Stopped');
    // Hold Start's answer (taken when the tunnel was STARTING) until the page has shown RUNNING from the stream.
    let heldState = '';
    await page.route('**/api/daemon/start/*', async (route) => {
      const answer = await route.fetch();
      heldState = ((await answer.json()) as { status: string }).status;
      await expect.poll(() => badge('bring').textContent(), { timeout: 15_000 }).toBe('Running');
      await route.fulfill({ response: answer });
    });
    const answered = page.waitForResponse('**/api/daemon/start/*');
    await card('bring').getByRole('button', { name: 'Start' }).click();
    await answered;
    await page.unroute('**/api/daemon/start/*');
    expect(heldState).toBe('STARTING');
    // The page reads the answer right after it arrives; give it that moment, then it must still say Running.
    await page.waitForTimeout(300);
    expect(await badge('bring').textContent()).toBe('Running');
  });

  it('shows the recent ssh output of a tunnel', async () => {
    await card('bring').locator('summary').click();
    const logs = card('bring').locator('[data-testid="logs"]');
    await expect.poll(() => logs.textContent(), { timeout: 10_000 }).not.toBe('Loading…');
    // ssh's own lines, as the daemon keeps them.
    expect(await logs.textContent()).toMatch(/debug1: /);
  });

  it('adding a tunnel through the form writes the file, keeps its comments, and the daemon starts it', async () => {
    const before = file();
    await page.getByRole('button', { name: 'Add tunnel' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(true);
    // remote_host suggestions come from the SSH config's Host entries.
    await expect.poll(() => page.locator('#ssh-hosts option').evaluateAll((o) => o.map((x) => (x as unknown as { value: string }).value))).toEqual(['badkey', 'testhost']);
    await page.fill('#f-name', 'added');
    await page.check('input[name="direction"][value="remote_to_local"]');
    await page.fill('#f-remote_host', 'testhost');
    await page.fill('#f-remote_port', String(echoPort));
    await page.fill('#f-local_port', `127.0.0.1:${addPort}`);
    await page.selectOption('#f-health_check', 'tcp');
    await page.fill('#f-hc-interval', '30');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(ARTIFACTS, 'panel-form-390.png') });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(false);
    const after = file();
    expect(after).toContain('- name: added');
    expect(after).toContain(`local_port: 127.0.0.1:${addPort}`);
    expect(after).toMatch(/health_check:\n\s+type: tcp\n\s+interval: 30\n/);
    for (const line of before.split('\n').filter((l) => l.includes('#'))) expect(after).toContain(line.trim().replace(/\s+#/, ' #'));
    expect(after).toContain('owner: lab-team');
    await expect.poll(() => page.locator('[data-testid="tunnel"]').count(), { timeout: 10_000 }).toBe(3);
    await expect.poll(() => badge('added').textContent(), { timeout: 20_000 }).toBe('Running');
    expect(await roundTrip(addPort, 'through the new tunnel')).toBe('through the new tunnel');
    // A backup of the previous text exists (next to the file; the daemon reacts only to the config file itself).
    expect(readdirSync(join(d.dir, 'config', '.panel-backups'))).toHaveLength(1);
    expect(readdirSync(join(d.dir, 'config')).filter((f) => f !== '.panel-backups')).toEqual(['config.yaml']);
  });

  it('an invalid port is shown next to its field and the file is not touched', async () => {
    const before = file();
    await page.getByRole('button', { name: 'Add tunnel' }).click();
    await page.fill('#f-name', 'broken');
    await page.fill('#f-remote_host', 'testhost');
    await page.fill('#f-remote_port', '22');
    await page.fill('#f-local_port', '70000');
    await page.getByRole('button', { name: 'Save' }).click();
    const error = page.locator('#err-local_port');
    await expect.poll(() => error.isVisible()).toBe(true);
    expect(await error.textContent()).toMatch(/70000/);
    expect(await page.locator('#f-local_port').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#err-remote_port').isVisible()).toBe(false);
    expect(await page.locator('#editor').isVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'panel-error-1280.png') });
    expect(file()).toBe(before);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('an edit on disk while the form is open is a conflict: shown, nothing lost, then resolved', async () => {
    await card('expose').getByRole('button', { name: 'Edit' }).click();
    await page.fill('#f-name', 'expose-renamed');
    // Someone edits the file by hand meanwhile (another tunnel, and a new comment).
    const onDisk = file().replace('# end of tunnels', '# end of tunnels (edited by hand)').replace('- name: added', '- name: added-by-hand');
    d.writeConfig(onDisk);
    await page.getByRole('button', { name: 'Save' }).click();
    const conflict = page.locator('#conflict');
    await expect.poll(() => conflict.isVisible()).toBe(true);
    expect(await conflict.textContent()).toMatch(/changed on disk/);
    expect(await conflict.textContent()).toMatch(/unchanged on disk/);
    expect(await page.inputValue('#f-name')).toBe('expose-renamed');
    expect(file()).toBe(onDisk);
    await page.screenshot({ path: join(ARTIFACTS, 'panel-conflict-1280.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(ARTIFACTS, 'panel-conflict-390.png') });
    await page.setViewportSize({ width: 1280, height: 800 });
    await conflict.getByRole('button', { name: 'Save my version' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(false);
    const merged = file();
    expect(merged).toContain('- name: expose-renamed');
    expect(merged).toContain('- name: added-by-hand');
    expect(merged).toContain('# end of tunnels (edited by hand)');
    await expect.poll(() => badge('expose-renamed').textContent(), { timeout: 20_000 }).toBe('Running');
  });

  it('a conflicting edit of the same tunnel shows both versions side by side', async () => {
    await card('added-by-hand').getByRole('button', { name: 'Edit' }).click();
    await page.fill('#f-remote_port', '2222');
    d.writeConfig(file().replace(`local_port: 127.0.0.1:${addPort}`, `local_port: 127.0.0.1:${addPort + 1}`));
    await page.getByRole('button', { name: 'Save' }).click();
    const conflict = page.locator('#conflict');
    await expect.poll(() => conflict.isVisible()).toBe(true);
    expect(await conflict.textContent()).toMatch(/was changed on disk/);
    expect(await conflict.textContent()).toContain(`127.0.0.1:${addPort + 1}`);
    expect(await conflict.textContent()).toContain('2222');
    await conflict.getByRole('button', { name: 'Discard mine, load the file' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(false);
    expect(file()).toContain(`local_port: 127.0.0.1:${addPort + 1}`);
  });

  it('deleting a tunnel removes it from the file and the daemon stops it', async () => {
    await card('added-by-hand').getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.locator('#confirm').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => card('added-by-hand').count(), { timeout: 10_000 }).toBe(0);
    expect(file()).not.toContain('added-by-hand');
    expect(file()).toContain('# Tunnels of the lab (kept by every save)');
    await d.waitFor('the tunnel gone from /status', async () => !(await d.json<{ name: string }[]>('/status')).some((s) => s.name === 'added-by-hand'));
  });

  it('a broken entry on disk is shown with line and column and left out, while the tunnel it replaced keeps running', async () => {
    const good = file();
    d.writeConfig(good.replace(`local_port: ${bringPort}`, 'local_port: 99999'));
    const banner = page.locator('[data-testid="config-partial"]');
    await expect.poll(() => banner.isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await banner.textContent()).toMatch(/^Entries with problems, left out: 1/);
    expect(await banner.textContent()).toMatch(/Line \d+, column \d+: tunnels\[0\]\.local_port: Expected a port .*found "99999"\. \(invalid_port\)/);
    expect(await badge('bring').textContent()).toBe('Left out');
    // The daemon still runs the old entry; the page lists it apart.
    await expect.poll(() => page.locator('#stale [data-testid="tunnel"]').count()).toBe(1);
    expect(await page.locator('#stale [data-testid="description"]').textContent()).toBe(`bring testhost:${echoPort} to local :${bringPort}`);
    await page.evaluate(() => {
      document.getElementById('toasts')?.replaceChildren();
      window.scrollTo(0, 0);
    });
    await page.screenshot({ path: join(ARTIFACTS, 'panel-invalid-1280.png'), fullPage: true });
    d.writeConfig(good);
    await expect.poll(() => banner.count(), { timeout: 10_000 }).toBe(0);
  });

  it('screenshots at 390 px and 1280 px', async () => {
    await expect.poll(() => badge('bring').textContent(), { timeout: 15_000 }).toBe('Running');
    await page.evaluate(() => {
      document.getElementById('toasts')?.replaceChildren();
      window.scrollTo(0, 0);
    });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: join(ARTIFACTS, 'panel-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    // Nothing wider than the phone's screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, 'panel-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(consoleErrors).toEqual([]);
  });

  it('with PANEL_TOKEN the page asks for the password first', async () => {
    const guarded = await startPanelProcess(d, server.sshConfigPath, { PANEL_TOKEN: 'correct horse battery' });
    const p2 = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await p2.goto(guarded.url);
      await expect.poll(() => p2.locator('#login').isVisible()).toBe(true);
      await p2.fill('#password', 'wrong');
      await p2.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => p2.locator('#login-error').textContent()).toBe('Wrong password. (wrong_password)');
      await p2.screenshot({ path: join(ARTIFACTS, 'panel-login-390.png') });
      await p2.fill('#password', 'correct horse battery');
      await p2.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => p2.locator('[data-testid="tunnel"]').count()).toBe(2);
      const cookies = await p2.context().cookies();
      expect(cookies.find((c) => c.name === 'tm_panel_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      // SIGTERM with a page still connected to the live events: the panel ends at once, cleanly.
      const t0 = Date.now();
      await guarded.stop();
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(guarded.child.exitCode).toBe(0);
    } finally {
      await p2.close();
      await guarded.stop();
    }
  });

  it('a tunnel whose fields a merge key brings: the form shows them, and an edit writes only the changed field, the merge stays', async () => {
    const mergedPort = await port();
    const movedPort = await port();
    d.writeConfig(
      '# shared by both tunnels\n' +
        `defaults: &defaults\n  remote_host: testhost\n  remote_port: ${echoPort}\n  direction: remote_to_local\n` +
        'tunnels:\n' +
        `  - <<: *defaults\n    name: bring\n    local_port: ${bringPort}\n` +
        `  - <<: *defaults\n    name: merged\n    local_port: ${mergedPort}\n`,
    );
    await expect.poll(() => badge('merged').textContent(), { timeout: 20_000 }).toBe('Running');
    const bring = (await d.json<{ name: string; pid: number }[]>('/status')).find((s) => s.name === 'bring');
    await card('merged').getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(true);
    expect(await page.inputValue('#f-remote_host')).toBe('testhost');
    expect(await page.inputValue('#f-remote_port')).toBe(String(echoPort));
    expect(await page.locator('#kept-keys').textContent()).toContain('the merge key << brings are shown above');
    await page.fill('#f-local_port', String(movedPort));
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(false);
    const after = file();
    expect(after.match(/<<: \*defaults/g)).toHaveLength(2);
    expect(after).toContain(`  - <<: *defaults\n    name: merged\n    local_port: ${movedPort}\n`);
    expect(after).toContain('# shared by both tunnels');
    await d.waitFor('merged on its new port', async () => (await roundTrip(movedPort, 'merged').catch(() => '')) === 'merged');
    // The other tunnel was not touched: same process.
    expect((await d.json<{ name: string; pid: number }[]>('/status')).find((s) => s.name === 'bring')?.pid).toBe(bring?.pid);
    expect(consoleErrors).toEqual([]);
  });
  it('a SOCKS proxy through the form: no remote port asked, written as direction socks, started, and curl goes through it', async () => {
    const socksPort = await port();
    const web = http.createServer((req, res) => res.end(`web ${req.url ?? ''}`));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    try {
      await page.getByRole('button', { name: 'Add tunnel' }).click();
      await expect.poll(() => page.locator('#editor').isVisible()).toBe(true);
      await page.fill('#f-name', 'socks');
      await page.check('input[name="direction"][value="socks"]');
      expect(await page.locator('#hint-remote_port').textContent()).toBe('Leave empty: a SOCKS proxy connects wherever its clients ask.');
      await page.fill('#f-remote_host', 'testhost');
      await page.fill('#f-local_port', String(socksPort));
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('#editor').isVisible()).toBe(false);
      const written = file().slice(file().indexOf('- name: socks'));
      expect(written).toMatch(/^- name: socks\n(?: {4}\w+: .*\n)*? {4}direction: socks\n/);
      // No remote port: none, or the empty one the form keeps so that every entry has the same fields.
      expect(written).not.toMatch(/remote_port: (?!""\n)\S/);
      await expect.poll(() => badge('socks').textContent(), { timeout: 20_000 }).toBe('Running');
      expect(await card('socks').locator('[data-testid="description"]').textContent()).toBe(`SOCKS proxy on local :${socksPort} through testhost`);
      const webPort = (web.address() as AddressInfo).port;
      const out = await run('curl', ['-sS', '--max-time', '5', '--socks5-hostname', `127.0.0.1:${socksPort}`, `http://localhost:${webPort}/via-panel`]);
      expect(out.stdout).toBe('web /via-panel');
    } finally {
      await new Promise((r) => web.close(r));
    }
    expect(consoleErrors).toEqual([]);
  });

  it('a SOCKS proxy on every address: the form warns while it is typed in, the card says who can use it, and it runs', async () => {
    const openPort = await port();
    const told = `The SOCKS proxy listens on every address of this machine (0.0.0.0:${openPort}): anyone who can reach this machine can use it to reach every network testhost reaches.`;
    const formNote = page.locator('#editor [data-testid="form-exposure"]');
    await page.getByRole('button', { name: 'Add tunnel' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(true);
    // A new tunnel's form opens without one.
    expect(await page.locator('#exposure-note').isVisible()).toBe(false);
    await page.fill('#f-name', 'open-socks');
    await page.check('input[name="direction"][value="socks"]');
    await page.fill('#f-remote_host', 'testhost');
    await page.fill('#f-local_port', `0.0.0.0:${openPort}`);
    await expect.poll(() => formNote.textContent()).toBe(`Open beyond this machine${told}`);
    // Loopback opens nothing beyond this machine: the note goes, and comes back.
    await page.fill('#f-local_port', `127.0.0.1:${openPort}`);
    await expect.poll(() => page.locator('#exposure-note').isVisible()).toBe(false);
    await page.fill('#f-local_port', `0.0.0.0:${openPort}`);
    await expect.poll(() => formNote.isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('#editor').isVisible()).toBe(false);
    // Told, not refused: written, and the daemon runs it.
    expect(file()).toContain(`local_port: 0.0.0.0:${openPort}`);
    await expect.poll(() => badge('open-socks').textContent(), { timeout: 20_000 }).toBe('Running');
    const note = card('open-socks').locator('[data-testid="exposure"]');
    expect(await note.textContent()).toBe(`Open beyond this machine${told}`);
    expect(await note.getAttribute('role')).toBe('note');
    // A loopback tunnel's card has none.
    expect(await card('bring').locator('[data-testid="exposure"]').count()).toBe(0);
    // Editing it shows the warning in the form at once.
    await card('open-socks').getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => formNote.textContent()).toBe(`Open beyond this machine${told}`);
    await page.getByRole('button', { name: 'Cancel' }).click();
    // In the page's language: French from Accept-Language.
    const fr = await browser.newPage({ locale: 'fr-FR', viewport: { width: 390, height: 844 } });
    try {
      await fr.goto(panel.url);
      const frNote = fr.locator(`#tunnels [data-name="open-socks"] [data-testid="exposure"]`);
      await expect.poll(() => frNote.textContent()).toBe(
        `Ouvert au-delà de cette machineLe proxy SOCKS écoute sur toutes les adresses de cette machine (0.0.0.0:${openPort}) : quiconque peut joindre cette machine peut s'en servir pour atteindre tous les réseaux que testhost atteint.`,
      );
      // On a phone nothing overflows sideways.
      expect(await fr.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await fr.screenshot({ path: join(ARTIFACTS, 'panel-exposure-fr-390.png'), fullPage: true });
    } finally {
      await fr.close();
    }
    expect(consoleErrors).toEqual([]);
  });
});
