import type { Language } from './language.js';

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The page as served in one language: `<html lang dir>` set, and every element whose
 * whole text is a catalogue key (`data-i18n="key">text<`) already in that language, so
 * nothing shows in English while the scripts load (they set the same texts again, and
 * the attributes, in the language the reader chose).
 */
export function pageIn(html: string, language: Language, catalogue: Readonly<Record<string, unknown>>): string {
  return html
    .replace('<html lang="en">', `<html lang="${language.code}" dir="${language.dir}">`)
    .replace(/(data-i18n="([\w.]+)"[^>]*>)([^<]*)</g, (whole, open: string, key: string) => {
      const text = catalogue[key];
      return typeof text === 'string' ? `${open}${escape(text)}<` : whole;
    });
}
