// Every text/background pair the panel's stylesheet uses, in both themes, passes WCAG
// AA (4.5:1 for text, 3:1 for focus rings and borders that carry meaning). The colours
// are read from style.css itself (each a light-dark() pair), so a new colour that
// fails is caught here before the browser's audit.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATIC_DIR } from '../../../src/panel/assets.js';

const css = readFileSync(join(STATIC_DIR, 'style.css'), 'utf8');
const palette = new Map<string, { light: string; dark: string }>();
for (const m of css.matchAll(/--([\w-]+):\s*light-dark\((#[0-9a-f]{6}),\s*(#[0-9a-f]{6})\)/gi)) palette.set(m[1]!, { light: m[2]!, dark: m[3]! });

function luminance(hex: string): number {
  const n = parseInt(hex.slice(1), 16);
  const [r, g, b] = [n >> 16, (n >> 8) & 255, n & 255].map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};

/** [foreground, background] as the stylesheet combines them. */
const TEXT: [string, string][] = [
  ['text', 'bg'], ['text', 'card'], ['muted', 'bg'], ['muted', 'card'],
  ['on-fill', 'accent-fill'], ['on-fill', 'danger-fill'], ['bg', 'text'],
  ['danger', 'card'], ['danger', 'bg'], ['danger', 'danger-bg'], ['ok', 'card'], ['warn', 'card'], ['accent', 'card'],
  // Badges (each state's words on its tint) and banners.
  ['ok', 'ok-bg'], ['info', 'info-bg'], ['warn', 'warn-bg'], ['danger', 'danger-bg'], ['idle', 'idle-bg'],
  ['text', 'ok-bg'], ['text', 'warn-bg'], ['text', 'info-bg'], ['text', 'danger-bg'],
  // The checked direction choice, the conflict box.
  ['muted', 'info-bg'], ['muted', 'warn-bg'],
];
const NON_TEXT: [string, string][] = [['accent', 'bg'], ['accent', 'card'], ['danger', 'card'], ['muted', 'card']];

describe('the panel\'s colours', () => {
  it('are read from the stylesheet as light-dark() pairs', () => {
    for (const name of new Set([...TEXT, ...NON_TEXT].flat())) expect(palette.has(name), `--${name}`).toBe(true);
  });
  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: every text pair is at least 4.5:1, every focus ring and border at least 3:1`, () => {
      const low = (pairs: [string, string][], min: number) =>
        pairs
          .map(([f, b]) => ({ pair: `--${f} on --${b}`, ratio: Math.round(contrast(palette.get(f)![theme], palette.get(b)![theme]) * 100) / 100 }))
          .filter((r) => r.ratio < min);
      expect(low(TEXT, 4.5)).toEqual([]);
      expect(low(NON_TEXT, 3)).toEqual([]);
    });
  }
});
