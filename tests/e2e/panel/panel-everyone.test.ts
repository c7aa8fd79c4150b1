// The panel for everyone who used the reference's (SPEC §8), in a real headless
// Chromium against the built daemon and a real sshd: the nine languages picked from
// Accept-Language and a remembered switch, Arabic right to left, every visible string
// from the catalogue, errors as translated sentences with their code, dates and
// durations in the locale's form; light and dark with a remembered switch; an axe-core
// audit of every view in both themes and in Arabic; keyboard use; no sideways
// scrolling on a phone; the daemon's failures told apart. Screenshots of the main
// views go to test-artifacts/panel/.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATIC_DIR } from '../../../src/panel/assets.js';
import { seriousViolations } from '../axe.js';
import { echoServer, port, REPO, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';
import { startPanelProcess, type Panel } from '../panel-process.js';

declare const document: {
  documentElement: { lang: string; dir: string; scrollWidth: number };
  body: { innerText: string };
  activeElement: unknown;
  querySelectorAll(s: string): ArrayLike<{ getAttribute(a: string): string | null; textContent: string | null }>;
};
declare const localStorage: { clear(): void; getItem(k: string): string | null };
declare function getComputedStyle(e: unknown): { backgroundColor: string; outlineStyle: string; outlineWidth: string };

const ARTIFACTS = join(REPO, 'test-artifacts', 'panel');
const TOKEN = 'the-daemons-own-token';
/** expect.poll with room for a loaded machine (its default is one second). */
const poll = <T>(fn: () => Promise<T> | T, opts: { timeout?: number } = {}) => expect.poll(fn, { timeout: 10_000, ...opts });
const catalogue = (code: string) => JSON.parse(readFileSync(join(STATIC_DIR, 'i18n', `${code}.json`), 'utf8')) as Record<string, string>;

describe('the panel for everyone: languages, themes, accessibility, any screen', () => {
  let server: Sshd;
  let echo: { close(): Promise<void> };
  let d: Daemon;
  let panel: Panel;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];

  const badge = (name: string) => page.locator(`#tunnels [data-name="${name}"] [data-testid="status"]`);
  /** Opens the page as a browser asking for `language` would. */
  async function open(language: string, p: Page = page, url = panel.url) {
    await p.setExtraHTTPHeaders({ 'accept-language': language });
    await p.goto(url);
    await poll(() => p.locator('#app:not([hidden]), #login:not([hidden])').count(), { timeout: 10_000 }).toBe(1);
  }
  const running = async () => {
    await poll(() => badge('alpha').getAttribute('data-state'), { timeout: 20_000 }).toBe('RUNNING');
    await poll(() => badge('beta').getAttribute('data-state'), { timeout: 20_000 }).toBe('RUNNING');
  };
  const audit = async (p: Page, what: string) => {
    const found = await seriousViolations(p);
    expect(found, `${what}: ${JSON.stringify(found, null, 1)}`).toEqual([]);
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await sshd();
    const echoPort = await port();
    echo = await echoServer(echoPort);
    const entry = (name: string, remote: string | number, local: string | number, direction: string) =>
      `  - name: ${name}\n    remote_host: testhost\n    remote_port: ${typeof remote === 'number' ? remote : `"${remote}"`}\n    local_port: ${local}\n    direction: ${direction}\n`;
    const config = 'tunnels:\n' +
      // On every address of this machine: its card tells who can reach it (SPEC §5).
      entry('alpha', echoPort, `0.0.0.0:${await port()}`, 'remote_to_local') +
      entry('beta', `127.0.0.1:${await port()}`, echoPort, 'local_to_remote') +
      // Left out: its problem is shown (line, column, code) in the reader's language.
      entry('gamma', echoPort, 99999, 'remote_to_local');
    d = await startDaemon({ config, sshConfigPath: server.sshConfigPath, env: { TUNNEL_API_TOKEN: TOKEN } });
    panel = await startPanelProcess(d, server.sshConfigPath, { TUNNEL_API_TOKEN: TOKEN });
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('console', (m) => {
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

  it('the language follows Accept-Language, in the served HTML and on the page; Arabic right to left', async () => {
    const cases = [
      { header: 'zh-CN,zh;q=0.9,en;q=0.8', lang: 'zh-CN', dir: 'ltr', title: '隧道', running: '运行中' },
      { header: 'zh-HK,zh;q=0.9', lang: 'zh-TW', dir: 'ltr', title: '隧道', running: '執行中' },
      { header: 'ja-JP,ja;q=0.9', lang: 'ja', dir: 'ltr', title: 'トンネル', running: '実行中' },
      { header: 'ko-KR', lang: 'ko', dir: 'ltr', title: '터널', running: '실행 중' },
      { header: 'ru-RU,ru', lang: 'ru', dir: 'ltr', title: 'Туннели', running: 'Работает' },
      { header: 'ar-EG,ar;q=0.9', lang: 'ar', dir: 'rtl', title: 'الأنفاق', running: 'يعمل' },
    ];
    for (const c of cases) {
      // The server writes the language into <html> before any script runs.
      const html = await (await fetch(panel.url, { headers: { 'accept-language': c.header } })).text();
      expect(html).toContain(`<html lang="${c.lang}" dir="${c.dir}">`);
      await open(c.header);
      await running();
      expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([c.lang, c.dir]);
      expect(await page.locator('.toolbar h1 [data-i18n]').textContent()).toBe(c.title);
      // A state keeps its code (data-state, title) and is told in words.
      expect(await badge('alpha').textContent()).toBe(c.running);
      expect(await badge('alpha').getAttribute('title')).toBe('RUNNING');
    }
    const zh = catalogue('zh-CN');
    await open('zh-CN');
    await running();
    const sentence = await page.locator('#tunnels [data-name="alpha"] [data-testid="description"]').textContent();
    expect(sentence).toMatch(/^将 testhost:\d+ 映射到本地 0\.0\.0\.0:\d+$/);
    // What it opens beyond this machine, and to whom, in Chinese.
    expect(await page.locator('#tunnels [data-name="alpha"] [data-testid="exposure"]').textContent()).toMatch(
      /^对本机以外开放转发监听本机的所有地址（0\.0\.0\.0:\d+）：任何能访问本机的人都可经由 testhost 访问 localhost:\d+。$/,
    );
    // The left-out entry's problem: where, the rule in Chinese, the value found, the code.
    const partial = await page.locator('[data-testid="config-partial"]').textContent();
    expect(partial).toContain(zh['banner.partial_title']!.replace('{count}', '1'));
    expect(partial).toMatch(/第 \d+ 行第 \d+ 列：tunnels\[2\]\.local_port：应为 1–65535 的端口.*实际为 "99999"。（invalid_port）/);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(ARTIFACTS, 'list-zh-CN-light-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('every string on the page comes from the catalogue: no English in a Chinese or Arabic page', async () => {
    const en = catalogue('en');
    for (const lang of ['zh-CN', 'ar']) {
      await open(lang);
      await running();
      await page.getByRole('button', { name: catalogue(lang)['list.add'] }).click();
      await poll(() => page.locator('#editor').isVisible()).toBe(true);
      const text = await page.evaluate(() => {
        const attrs = [...(document.querySelectorAll('[aria-label], [title], [placeholder]') as unknown as { getAttribute(a: string): string | null }[])]
          .flatMap((e) => ['aria-label', 'title', 'placeholder'].map((a) => e.getAttribute(a) ?? ''));
        return [document.body.innerText, ...attrs].join('\n');
      });
      expect(text).not.toContain('⟦');
      // Latin words left once the user's own data and the technical terms are taken out.
      const own = /\b(English|Español|Français|alpha|beta|gamma|testhost|tunnel-manager|tunnels\[\d\]\.\w+|remote_to_local|local_to_remote|socks|SOCKS|invalid_port|user@bastion|Host|ProxyJump|PANEL_TOKEN|ssh|SSH|tcp|http|ip|host|port|PID|RUNNING|default|IPv4|IPv6|debug1:.*|OpenSSH.*|Authenticated.*|pid \d+|localhost)\b/g;
      const words = text.replace(/\/[\w./-]+/g, '').replace(/\b[0-9a-f]{8}\b/g, '').replace(own, '').match(/\b[A-Za-z]{3,}\b/g) ?? [];
      expect(words, lang).toEqual([]);
      // And no English sentence of the catalogue shows.
      const english = Object.values(en).flatMap((v) => v.split(/\{\w+\}/)).filter((s) => /[a-z]{4,}.*\s.*[a-z]{4,}/.test(s));
      expect(english.filter((s) => text.includes(s.trim()))).toEqual([]);
      await page.keyboard.press('Escape');
    }
  });

  it('a language chosen with the switch wins over the browser\'s and is remembered', async () => {
    await open('en-US');
    await running();
    await Promise.all([page.waitForEvent('load'), page.selectOption('#language', 'ja')]);
    await poll(() => page.evaluate(() => document.documentElement.lang)).toBe('ja');
    expect(await page.locator('#add').textContent()).toBe('トンネルを追加');
    // Another page of the same browser, which still asks for English.
    const other = await context.newPage();
    await open('en-US', other);
    expect(await other.evaluate(() => document.documentElement.lang)).toBe('ja');
    expect(await other.locator('#language').inputValue()).toBe('ja');
    await other.close();
    await page.evaluate(() => localStorage.clear());
  });

  it('errors in the reader\'s language with their code: the form\'s port check, the daemon\'s refusal', async () => {
    await open('zh-CN');
    await running();
    // By keyboard: focus the add button, Enter opens the form, the focus is in it.
    await page.locator('#add').focus();
    await page.keyboard.press('Enter');
    await poll(() => page.locator('#editor').isVisible()).toBe(true);
    await page.fill('#f-name', 'delta');
    await page.fill('#f-remote_host', 'testhost');
    await page.fill('#f-remote_port', '22');
    await page.fill('#f-local_port', '70000');
    await page.locator('#save').focus();
    await page.keyboard.press('Enter');
    const error = page.locator('#err-local_port');
    await poll(() => error.isVisible()).toBe(true);
    expect(await error.textContent()).toBe('应为 1–65535 的端口，或 "ip:port"（IPv4、[IPv6] 或主机名）；实际为 "70000"。（invalid_port）');
    expect(await error.locator('[data-code]').getAttribute('data-code')).toBe('invalid_port');
    await page.screenshot({ path: join(ARTIFACTS, 'form-error-zh-CN-light-1280.png') });
    await audit(page, 'the form with an error (zh-CN)');
    await page.keyboard.press('Escape');
    await poll(() => page.locator('#editor').isVisible()).toBe(false);
  });

  it('dates, durations and numbers in the locale\'s form', async () => {
    for (const { lang, up, date, unit } of [
      // The duration's unit and the date's month in the language's own words (Intl).
      { lang: 'ja', up: /^稼働 /, date: /^\d{4}\/\d{1,2}\/\d{1,2} /, unit: /[\d٠-٩]+ ?(秒|分|時間)/ },
      { lang: 'ar', up: /^يعمل منذ /, date: /[\u0600-\u06FF]/, unit: /[\d٠-٩]+ ?[\u0600-\u06FF]/ },
      { lang: 'ru', up: /^работает /, date: /^\d{1,2} [а-я]+\.? \d{4}/, unit: /\d+ ?(с|мин|ч)(\s|$)/ },
    ]) {
      await open(lang);
      await running();
      const time = page.locator('#tunnels [data-name="alpha"] time');
      expect(await time.textContent()).toMatch(up);
      expect(await time.textContent()).toMatch(unit);
      expect(await time.getAttribute('title')).toMatch(date);
      expect(Date.parse((await time.getAttribute('datetime'))!)).toBeGreaterThan(0);
    }
  });

  it('light and dark follow the system, the switch overrides it and is remembered', async () => {
    const body = () => page.evaluate(() => getComputedStyle((document as unknown as { body: unknown }).body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'dark' });
    await open('en');
    expect(await body()).toBe('rgb(15, 19, 24)');
    await page.selectOption('#theme', 'light');
    expect(await body()).toBe('rgb(245, 246, 248)');
    await open('en');
    expect(await page.locator('#theme').inputValue()).toBe('light');
    expect(await body()).toBe('rgb(245, 246, 248)');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.selectOption('#theme', 'dark');
    await open('en');
    expect(await body()).toBe('rgb(15, 19, 24)');
    await page.selectOption('#theme', 'system');
    expect(await body()).toBe('rgb(245, 246, 248)');
    expect(await page.evaluate(() => localStorage.getItem('tunnel-manager.theme'))).toBeNull();
  });

  it('axe finds nothing serious on the list, the details, the form, the confirmation and the login, in both themes and in Arabic', async () => {
    const guarded = await startPanelProcess(d, server.sshConfigPath, { TUNNEL_API_TOKEN: TOKEN, PANEL_TOKEN: 'a panel password' });
    const login = await context.newPage();
    try {
      for (const { scheme, lang } of [{ scheme: 'light', lang: 'en' }, { scheme: 'dark', lang: 'en' }, { scheme: 'dark', lang: 'ar' }] as const) {
        const shot = (view: string, width: number) => join(ARTIFACTS, `${view}-${lang}-${scheme}-${width}.png`);
        await page.emulateMedia({ colorScheme: scheme });
        await open(lang);
        await running();
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
          expect(await page.evaluate(() => document.documentElement.scrollWidth), `list ${lang} ${width}`).toBeLessThanOrEqual(width);
          await page.screenshot({ path: shot('list', width), fullPage: true });
        }
        await page.setViewportSize({ width: 1280, height: 800 });
        // The list with a tunnel's details open: the ssh output, reachable and named.
        await page.locator('#tunnels [data-name="alpha"] summary').click();
        await poll(() => page.locator('#tunnels [data-name="alpha"] [data-testid="logs"]').textContent(), { timeout: 10_000 }).toMatch(/debug1/);
        await audit(page, `list and details ${lang} ${scheme}`);
        await page.locator('#tunnels [data-name="alpha"] summary').click();
        // The edit form, then its confirmation.
        await page.locator('#tunnels [data-name="beta"] .tunnel-actions button').last().click();
        await poll(() => page.locator('#editor').isVisible()).toBe(true);
        await audit(page, `form ${lang} ${scheme}`);
        for (const width of lang === 'en' ? [1280, 390] : [390]) {
          await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
          await page.screenshot({ path: shot('form', width) });
        }
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.locator('#delete').click();
        await poll(() => page.locator('#confirm').isVisible()).toBe(true);
        if (scheme === 'dark') await audit(page, `confirm ${lang} ${scheme}`);
        await page.keyboard.press('Escape');
        await poll(() => page.locator('#confirm').isVisible()).toBe(false);
        expect(await page.locator('#editor').isVisible()).toBe(true);
        await page.keyboard.press('Escape');
        await poll(() => page.locator('#editor').isVisible()).toBe(false);

        await login.emulateMedia({ colorScheme: scheme });
        await open(lang, login, guarded.url);
        await poll(() => login.locator('#login').isVisible()).toBe(true);
        await login.fill('#password', 'wrong');
        await login.locator('#login-form button').click();
        await poll(() => login.locator('#login-error').textContent()).toContain('wrong_password');
        await audit(login, `login ${lang} ${scheme}`);
        for (const width of lang === 'en' ? [1280, 390] : [390]) {
          await login.setViewportSize({ width, height: width === 390 ? 844 : 800 });
          await login.screenshot({ path: shot('login', width) });
        }
      }
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
      await login.close();
      await guarded.stop();
    }
  });

  it('by keyboard: every action reachable with a visible focus, the ssh output box included; status never by colour alone', async () => {
    await open('en');
    await running();
    await page.locator('#tunnels [data-name="alpha"] summary').click();
    await poll(() => page.locator('#tunnels [data-name="alpha"] [data-testid="logs"]').textContent(), { timeout: 10_000 }).toMatch(/debug1/);
    const wanted = await page.evaluate(() =>
      [...(document.querySelectorAll('.topbar select, .topbar button:not([hidden]), #app button:not([disabled]), #app summary, #app pre[tabindex]') as unknown as { getAttribute(a: string): string | null; id: string; textContent: string | null }[])]
        .map((e) => e.getAttribute('aria-label') || e.id || e.textContent),
    );
    const reached: string[] = [];
    await page.locator('.brand').focus();
    for (let i = 0; i < 60 && reached.length < wanted.length + 5; i++) {
      await page.keyboard.press('Tab');
      const r = await page.evaluate(() => {
        const e = document.activeElement as { getAttribute(a: string): string | null; id: string; textContent: string | null; matches(s: string): boolean } | null;
        // Past the last control the focus leaves the page.
        if (!e || e === (document as unknown as { body: unknown }).body) return null;
        const style = getComputedStyle(e);
        return { name: e.getAttribute('aria-label') || e.id || e.textContent, visible: e.matches(':focus-visible') && style.outlineStyle !== 'none' && style.outlineWidth !== '0px' };
      });
      if (!r) break;
      expect(r.visible, `focus ring on ${r.name}`).toBe(true);
      reached.push(r.name ?? '');
    }
    for (const w of wanted) expect(reached, `reach ${w}`).toContain(w);
    expect(reached).toContain('Recent ssh output');
    // Every state is told in words; the dots only repeat it and are hidden from screen readers.
    const states = await page.evaluate(() => [...(document.querySelectorAll('.badge') as unknown as { textContent: string | null }[])].map((b) => b.textContent ?? ''));
    expect(states.every((s) => s.trim().length > 0)).toBe(true);
    expect(await page.locator('.dot').getAttribute('aria-hidden')).toBe('true');
    expect(await page.locator('#daemon-state').textContent()).toBe('Daemon connected');
  });

  it('on a phone the form scrolls inside its dialog: its buttons stay on screen, nothing scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const lang of ['fr', 'ru', 'ar']) {
        await open(lang);
        await running();
        await page.locator('#add').click();
        await page.fill('#f-local_port', '70000');
        await page.fill('#f-remote_port', 'x');
        await page.locator('#save').click();
        await poll(() => page.locator('#err-local_port').isVisible()).toBe(true);
        const save = await page.locator('#save').boundingBox();
        const cancel = await page.locator('#editor .dialog-foot [data-close]').boundingBox();
        for (const b of [save, cancel]) {
          expect(b!.y + b!.height, lang).toBeLessThanOrEqual(844);
          expect(b!.x, lang).toBeGreaterThanOrEqual(0);
          expect(b!.x + b!.width, lang).toBeLessThanOrEqual(390);
        }
        // The fields scroll within the dialog, not the page behind it.
        expect(await page.locator('#editor .dialog-body').evaluate((e) => (e as unknown as { scrollHeight: number; clientHeight: number }).scrollHeight > (e as unknown as { clientHeight: number }).clientHeight)).toBe(true);
        expect(await page.evaluate(() => document.documentElement.scrollWidth), lang).toBeLessThanOrEqual(390);
        await page.screenshot({ path: join(ARTIFACTS, `form-error-${lang}-light-390.png`) });
        await page.keyboard.press('Escape');
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('a panel that cannot talk to the daemon says why and what to do, in the reader\'s language', async () => {
    const closed = await port();
    const cases: { env: Record<string, string>; api: string | undefined; code: string; words: string }[] = [
      { env: {}, api: undefined, code: 'daemon_token_missing', words: 'TUNNEL_API_TOKEN' },
      { env: { TUNNEL_API_TOKEN: 'not-the-one' }, api: undefined, code: 'daemon_token_rejected', words: 'TUNNEL_API_TOKEN' },
      { env: {}, api: `http://127.0.0.1:${closed}`, code: 'daemon_refused', words: '--api' },
    ];
    const zh = catalogue('zh-CN');
    for (const c of cases) {
      const p = await startPanelProcess(d, server.sshConfigPath, c.env, c.api);
      try {
        await open('zh-CN', page, p.url);
        const banner = page.locator('[data-testid="daemon-banner"]');
        await poll(() => banner.getAttribute('data-code'), { timeout: 10_000 }).toBe(c.code);
        const reason = await banner.locator('[data-testid="daemon-reason"]').textContent();
        expect(reason).toContain(`（${c.code}）`);
        expect(reason).toContain(c.words);
        expect(reason!.startsWith(zh[`error.${c.code}`]!.split('{where}')[0]!)).toBe(true);
        expect(reason).not.toMatch(/answered 401|not reachable/);
        if (c.code === 'daemon_token_missing') {
          await page.screenshot({ path: join(ARTIFACTS, 'daemon-token-missing-zh-CN-light-1280.png') });
          await audit(page, 'list with the daemon banner');
        }
      } finally {
        await p.stop();
      }
    }
    expect(consoleErrors).toEqual([]);
  });
});
