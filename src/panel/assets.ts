import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Hono, type Context } from 'hono';
import { pickLanguage, type Language } from './language.js';
import { pageIn } from './page-language.js';

/**
 * The page's files. They live in src/panel/static (no build step) and are found from
 * this module's own location, which works both from src/ (tests) and from dist/panel/
 * (the built CLI and the Docker image, whose package ships src/panel/static).
 */
export const STATIC_DIR = fileURLToPath(new URL('../../src/panel/static/', import.meta.url));

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'boot.js': 'text/javascript; charset=utf-8',
  'i18n.js': 'text/javascript; charset=utf-8',
  'messages.js': 'text/javascript; charset=utf-8',
  'switches.js': 'text/javascript; charset=utf-8',
  'i18n/languages.json': 'application/json; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'editor.js': 'text/javascript; charset=utf-8',
  'list.js': 'text/javascript; charset=utf-8',
  'state.js': 'text/javascript; charset=utf-8',
  'terminal.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

/**
 * The terminal emulator, served from the installed packages (no CDN, no build step):
 * their ES module builds, under /vendor/.
 */
const VENDOR: Record<string, { module: string; type: string }> = {
  'vendor/xterm.mjs': { module: '@xterm/xterm/lib/xterm.mjs', type: 'text/javascript; charset=utf-8' },
  'vendor/xterm.css': { module: '@xterm/xterm/css/xterm.css', type: 'text/css; charset=utf-8' },
  'vendor/addon-fit.mjs': { module: '@xterm/addon-fit/lib/addon-fit.mjs', type: 'text/javascript; charset=utf-8' },
};

export type Assets = Map<string, { body: string; type: string }>;

const JSON_TYPE = 'application/json; charset=utf-8';

/** The languages the page speaks, from the one list the page reads too. */
export function languagesOf(assets: Assets): Language[] {
  const list = assets.get('i18n/languages.json');
  if (!list) throw new Error('no i18n/languages.json');
  return JSON.parse(list.body) as Language[];
}

/** Reads every file once at start: a missing file is a packaging bug, reported at once. */
export async function loadAssets(dir: string = STATIC_DIR): Promise<Assets> {
  const out: Assets = new Map();
  for (const [name, type] of Object.entries(FILES)) {
    const body = await readFile(`${dir}${name}`, 'utf8').catch((e: unknown) => {
      throw new Error(`the panel's page is missing ${dir}${name}: ${e instanceof Error ? e.message : String(e)}`);
    });
    out.set(name, { body, type });
  }
  // One catalogue per language of the list; a language without its catalogue is a packaging bug.
  for (const { code } of languagesOf(out)) {
    const name = `i18n/${code}.json`;
    const body = await readFile(`${dir}${name}`, 'utf8').catch((e: unknown) => {
      throw new Error(`the panel's page is missing ${dir}${name}: ${e instanceof Error ? e.message : String(e)}`);
    });
    out.set(name, { body, type: JSON_TYPE });
  }
  const require = createRequire(import.meta.url);
  for (const [name, { module, type }] of Object.entries(VENDOR)) {
    const body = await readFile(require.resolve(module), 'utf8').catch((e: unknown) => {
      throw new Error(`the panel's terminal needs ${module} (npm ci installs it): ${e instanceof Error ? e.message : String(e)}`);
    });
    // The source map is not served; the reference to it would only be a 404 in the console.
    out.set(name, { body: body.replace(/\n\/[/*]# sourceMappingURL=\S+\s*$/, '\n'), type });
  }
  return out;
}

export function createAssetsApp(assets: Assets): Hono {
  const app = new Hono();
  const send = (c: Context, name: string) => {
    const a = assets.get(name);
    if (!a) throw new Error(`no asset ${name}`);
    return c.body(a.body, 200, { 'content-type': a.type, 'cache-control': 'no-cache' });
  };
  const languages = languagesOf(assets);
  const page = assets.get('index.html')?.body ?? '';
  // One page per language, made once: the browser's language (Accept-Language) picks it.
  const pages = new Map(languages.map((l) => [l.code, pageIn(page, l, JSON.parse(assets.get(`i18n/${l.code}.json`)?.body ?? '{}') as Record<string, unknown>)]));
  app.get('/', (c) => {
    const l = pickLanguage(c.req.header('accept-language'), languages);
    return c.body(pages.get(l.code) ?? page, 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', vary: 'Accept-Language' });
  });
  for (const name of assets.keys()) if (name !== 'index.html') app.get(`/${name}`, (c) => send(c, name));
  return app;
}
