// The two switches in the top bar: the language (the page reloads in it) and the theme
// (system, light or dark; applied at once). Both are remembered in this browser.
import { $, h } from './dom.js';
import { chooseLanguage, language, languages } from './i18n.js';

const THEME = 'tunnel-manager.theme';

const select = $('language');
select.replaceChildren(...languages.map((l) => h('option', { value: l.code, lang: l.code, dir: l.dir, selected: l.code === language.code }, l.name)));
select.addEventListener('change', () => chooseLanguage(select.value));

const theme = $('theme');
theme.value = document.documentElement.dataset.theme || 'system';
theme.addEventListener('change', () => {
  const v = theme.value;
  if (v === 'light' || v === 'dark') document.documentElement.dataset.theme = v;
  else delete document.documentElement.dataset.theme;
  try {
    if (v === 'system') localStorage.removeItem(THEME);
    else localStorage.setItem(THEME, v);
  } catch { /* applied, not remembered */ }
});
