// The panel's languages: one catalogue per language with exactly the keys of the
// English one (a missing key would show English in a Chinese page, an extra one is a
// typo), the same placeholders, and a sentence for every code the panel or the daemon
// can answer with, every state and every problem; the language picked from
// Accept-Language.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAssetsApp, loadAssets, STATIC_DIR } from '../../../src/panel/assets.js';
import { API_ERRORS } from '../../../src/api/types.js';
import { DAEMON_FAILURE_CODES } from '../../../src/panel/daemon-failure.js';
import { PANEL_ERROR_CODES } from '../../../src/panel/http-errors.js';
import { acceptedTags, pickLanguage, type Language } from '../../../src/panel/language.js';
import { PROBLEM_CODES } from '../../../src/panel/problem-codes.js';

const DIR = join(STATIC_DIR, 'i18n');
const languages = JSON.parse(readFileSync(join(DIR, 'languages.json'), 'utf8')) as Language[];
const catalogue = (code: string) => JSON.parse(readFileSync(join(DIR, `${code}.json`), 'utf8')) as Record<string, unknown>;
const en = catalogue('en');
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('the panel\'s catalogues', () => {
  it('speaks the nine languages of the reference, Arabic right to left', () => {
    expect(languages.map((l) => l.code)).toEqual(['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'es', 'fr', 'ru', 'ar']);
    expect(languages.filter((l) => l.dir === 'rtl').map((l) => l.code)).toEqual(['ar']);
    const files = readdirSync(DIR).filter((f) => f !== 'languages.json').sort();
    expect(files).toEqual(languages.map((l) => `${l.code}.json`).sort());
  });

  for (const { code } of languages.filter((l) => l.code !== 'en')) {
    it(`${code}: the same keys as English, each a non-empty text with the same placeholders`, () => {
      const c = catalogue(code);
      expect(Object.keys(en).filter((k) => !(k in c)), 'missing keys').toEqual([]);
      expect(Object.keys(c).filter((k) => !(k in en)), 'keys English does not have').toEqual([]);
      for (const [k, v] of Object.entries(c)) {
        expect(typeof v === 'string' && v.trim() !== '', `${code} ${k} is empty`).toBe(true);
        expect(placeholders(v as string), `${code} ${k}: placeholders`).toEqual(placeholders(en[k] as string));
      }
    });

    it(`${code}: translated, not English copied (only technical texts stay the same)`, () => {
      const c = catalogue(code);
      const same = Object.keys(en).filter((k) => c[k] === en[k] && /[A-Za-z]{3,}/.test((en[k] as string).replace(/\{\w+\}/g, '')));
      expect(same.filter((k) => !SAME_EVERYWHERE.has(k) && !(SAME_IN[code] ?? []).includes(k))).toEqual([]);
    });
  }

  it('words every error code the panel and the daemon answer with, every problem and every state', () => {
    const states = /export const STATES = \[([^\]]+)\]/.exec(readFileSync(join(STATIC_DIR, 'state.js'), 'utf8'))?.[1] ?? '';
    const STATES = [...states.matchAll(/'(\w+)'/g)].map((m) => m[1]!);
    expect(STATES).toContain('AUTH_REQUIRED');
    const needed = [
      ...[...PANEL_ERROR_CODES, ...DAEMON_FAILURE_CODES, 'daemon_error', ...Object.keys(API_ERRORS)].map((c) => `error.${c}`),
      ...PROBLEM_CODES.map((c) => `problem.${c}`),
      ...STATES.map((s) => `status.${s}`),
    ];
    expect(needed.filter((k) => !(k in en))).toEqual([]);
  });

  it('has every key the page asks for (data-i18n in the HTML, t() in the scripts)', () => {
    const used = new Set<string>();
    const html = readFileSync(join(STATIC_DIR, 'index.html'), 'utf8');
    for (const m of html.matchAll(/data-i18n="([^"]+)"/g)) used.add(m[1]!);
    for (const m of html.matchAll(/data-i18n-attr="([^"]+)"/g)) for (const pair of m[1]!.split(';')) used.add(pair.split(':')[1]!);
    for (const file of readdirSync(STATIC_DIR).filter((f) => f.endsWith('.js'))) {
      const js = readFileSync(join(STATIC_DIR, file), 'utf8');
      for (const m of js.matchAll(/\bt\(\s*'([\w.]+)'/g)) used.add(m[1]!);
      // Keys chosen by a condition: t(x ? 'a.b' : 'c.d').
      for (const m of js.matchAll(/\bt\([^()]*?\?\s*'([\w.]+)'\s*:\s*'([\w.]+)'/g)) used.add(m[1]!).add(m[2]!);
    }
    expect(used.size).toBeGreaterThan(100);
    expect([...used].filter((k) => !(k in en))).toEqual([]);
  });
});

/** Texts that read the same in every language: formats and technical terms. */
const SAME_EVERYWHERE = new Set(['describe.unknown', 'toast.tunnel_error', 'problem.in', 'error.with_code']);
/** Words a language shares with English. */
const SAME_IN: Record<string, string[]> = { fr: ['page.title', 'list.title', 'form.direction', 'form.check_type'], es: ['card.hash'] };

describe('the language of a request (Accept-Language)', () => {
  const pick = (h: string | undefined) => pickLanguage(h, languages).code;
  it('takes the best supported tag by q, then by order', () => {
    expect(acceptedTags('fr;q=0.5, ja, *;q=0.1, de;q=0')).toEqual(['ja', 'fr', '*']);
    expect(pick('de-DE, ja;q=0.8, en;q=0.5')).toBe('ja');
    expect(pick('en;q=0.3, ko;q=0.9')).toBe('ko');
  });
  it('tells Simplified from Traditional Chinese by the script a tag implies', () => {
    expect(pick('zh-CN,zh;q=0.9')).toBe('zh-CN');
    expect(pick('zh')).toBe('zh-CN');
    expect(pick('zh-SG')).toBe('zh-CN');
    expect(pick('zh-Hans-HK')).toBe('zh-CN');
    expect(pick('zh-TW')).toBe('zh-TW');
    expect(pick('zh-HK')).toBe('zh-TW');
    expect(pick('zh-Hant')).toBe('zh-TW');
    expect(pick('zh-MO')).toBe('zh-TW');
  });
  it('matches a region to its language, and falls back to English', () => {
    expect(pickLanguage('ar-EG', languages)).toMatchObject({ code: 'ar', dir: 'rtl' });
    expect(pick('es-MX')).toBe('es');
    expect(pick('fr-CA')).toBe('fr');
    expect(pick('RU')).toBe('ru');
    expect(pick('de, it')).toBe('en');
    expect(pick(undefined)).toBe('en');
    expect(pick('*')).toBe('en');
    expect(pick(';;;, ja')).toBe('ja');
  });
});

describe('the page as served', () => {
  it('comes in the browser\'s language before any script runs: <html lang dir>, the title and every plain text', async () => {
    const app = createAssetsApp(await loadAssets());
    const get = async (lang: string) => {
      const res = await app.request('/', { headers: { 'accept-language': lang } });
      expect(res.headers.get('vary')).toBe('Accept-Language');
      return res.text();
    };
    const zh = await get('zh-CN');
    expect(zh).toContain('<html lang="zh-CN" dir="ltr">');
    expect(zh).toContain('<title data-i18n="page.title">隧道 · tunnel-manager</title>');
    expect(zh).toContain('data-i18n="page.loading">加载中…</section>');
    expect(zh).toContain('data-i18n="list.add">添加隧道</button>');
    const ar = await get('ar');
    expect(ar).toContain('<html lang="ar" dir="rtl">');
    expect(ar).toContain('data-i18n="form.save">حفظ</button>');
    // Every data-i18n text of the Chinese page is the catalogue's.
    const zhCatalogue = catalogue('zh-CN');
    for (const m of zh.matchAll(/data-i18n="([\w.]+)"[^>]*>([^<]*)</g)) expect(m[2], m[1]).toBe(zhCatalogue[m[1]!]);
    expect(await get('')).toContain('<html lang="en" dir="ltr">');
  });
});
