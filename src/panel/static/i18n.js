// The page's language. One catalogue per language (i18n/<code>.json, the list in
// i18n/languages.json); the server picks one from Accept-Language and writes it into
// <html lang>, a choice made with the switch is remembered here and wins. Every string
// the page shows comes from the catalogue: static text through data-i18n attributes,
// the rest through t(). Dates, durations and numbers are the locale's own (Intl).

const STORE = 'tunnel-manager.language';

function stored() {
  try { return localStorage.getItem(STORE); } catch { return null; }
}

export const languages = await (await fetch('/i18n/languages.json')).json();
const find = (code) => languages.find((l) => l.code === code);

/** The language in use: the remembered choice, else the server's pick, else the first. */
export const language = find(stored()) || find(document.documentElement.lang) || languages[0];
const catalogue = await (await fetch(`/i18n/${language.code}.json`)).json();
document.documentElement.lang = language.code;
document.documentElement.dir = language.dir;

/** Remembers the choice and reloads the page in it. */
export function chooseLanguage(code) {
  try { localStorage.setItem(STORE, code); } catch { /* not remembered, still applied below */ }
  location.reload();
}

export const has = (key) => Object.prototype.hasOwnProperty.call(catalogue, key);

/** The text of `key` with its {placeholders} filled. A missing key shows as ⟦key⟧ and is logged. */
export function t(key, params) {
  if (!has(key)) {
    console.error(`the ${language.code} catalogue has no "${key}"`);
    return `⟦${key}⟧`;
  }
  const text = catalogue[key];
  // In a right-to-left page each value (a host:port, a path) is isolated, so its own
  // direction holds: ":8080" stays ":8080", "/etc/x.yaml" keeps its slash in front.
  const value = language.dir === 'rtl' ? (v) => `\u2068${v}\u2069` : (v) => v;
  return params ? text.replace(/\{(\w+)\}/g, (m, k) => (params[k] === undefined ? m : value(String(params[k])))) : text;
}

/** Fills data-i18n (text) and data-i18n-attr ("attr:key;attr:key") under `root`. */
export function translate(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of el.dataset.i18nAttr.split(';')) {
      const [attr, key] = pair.split(':');
      el.setAttribute(attr, t(key));
    }
  }
}

const numbers = new Intl.NumberFormat(language.code);
const relative = new Intl.RelativeTimeFormat(language.code, { numeric: 'auto' });
const dates = new Intl.DateTimeFormat(language.code, { dateStyle: 'medium', timeStyle: 'medium' });
const durations = typeof Intl.DurationFormat === 'function' ? new Intl.DurationFormat(language.code, { style: 'short' }) : null;

/** The largest two units of a duration: 42 s, 5 min, 3 h 12 min, 2 d 4 h. */
function parts(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return { seconds: s };
  const m = Math.floor(s / 60);
  if (m < 60) return { minutes: m };
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? { hours: h } : { hours: h, minutes: m % 60 };
  return h % 24 === 0 ? { days: Math.floor(h / 24) } : { days: Math.floor(h / 24), hours: h % 24 };
}

const UNIT = { days: 'day', hours: 'hour', minutes: 'minute', seconds: 'second' };

export const format = {
  number: (n) => numbers.format(n),
  /** A length of time in the locale's words (Intl.DurationFormat, or units one by one). */
  duration(ms) {
    const p = parts(ms);
    if (durations) return durations.format(p);
    return Object.entries(p).map(([k, v]) => new Intl.NumberFormat(language.code, { style: 'unit', unit: UNIT[k], unitDisplay: 'short' }).format(v)).join(' ');
  },
  /** A moment from now: "in 5 seconds", "5 秒后". */
  fromNow(ms) {
    const s = Math.round(ms / 1000);
    if (Math.abs(s) < 60) return relative.format(s, 'second');
    const m = Math.round(s / 60);
    if (Math.abs(m) < 60) return relative.format(m, 'minute');
    return relative.format(Math.round(m / 60), 'hour');
  },
  dateTime: (iso) => dates.format(new Date(iso)),
  /** Names joined as the locale joins a list: "a, b and c", "a、b和c". */
  list: (names) => new Intl.ListFormat(language.code, { type: 'conjunction' }).format(names),
};
