/** A language the page speaks: its catalogue's code (a BCP 47 tag), its own name, its writing direction. */
export interface Language {
  code: string;
  name: string;
  dir: 'ltr' | 'rtl';
}

/** `zh-HK`, `zh-Hant`, `zh-TW` → Traditional; `zh`, `zh-SG`, `zh-Hans` → Simplified: by the script the tag implies. */
function chineseScript(tag: string): 'Hant' | 'Hans' {
  try {
    return new Intl.Locale(tag).maximize().script === 'Hant' ? 'Hant' : 'Hans';
  } catch {
    return 'Hans';
  }
}

/** The tags of an Accept-Language header, best first (by q, then by order); q=0 means "not this one". */
export function acceptedTags(header: string | undefined): string[] {
  if (header === undefined) return [];
  const tags: { tag: string; q: number; at: number }[] = [];
  header.split(',').forEach((part, at) => {
    const [tag = '', ...params] = part.trim().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if ((tag === '*' || /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag)) && Number.isFinite(q) && q > 0) tags.push({ tag, q, at });
  });
  return tags.sort((a, b) => b.q - a.q || a.at - b.at).map((t) => t.tag);
}

/** The supported language a tag asks for: the same tag, else the same language (for Chinese, the same script). */
export function matchLanguage(tag: string, supported: readonly Language[]): Language | null {
  const lower = tag.toLowerCase();
  const exact = supported.find((l) => l.code.toLowerCase() === lower);
  if (exact) return exact;
  const primary = lower.split('-')[0];
  if (primary === 'zh') {
    const wanted = chineseScript(tag) === 'Hant' ? 'zh-tw' : 'zh-cn';
    return supported.find((l) => l.code.toLowerCase() === wanted) ?? null;
  }
  return supported.find((l) => l.code.toLowerCase().split('-')[0] === primary) ?? null;
}

/** The page's language for a request: the first accepted tag the panel speaks, else the first supported (English). */
export function pickLanguage(header: string | undefined, supported: readonly Language[]): Language {
  for (const tag of acceptedTags(header)) {
    const l = matchLanguage(tag, supported);
    if (l) return l;
  }
  const fallback = supported[0];
  if (!fallback) throw new Error('no language is supported');
  return fallback;
}
