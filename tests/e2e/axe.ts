// An axe-core audit of the page as it is: the library is evaluated in the page through
// the browser's debugging protocol (the panel's CSP allows only its own scripts, so it
// cannot be added as a <script>), then run on the whole document. Only the serious and
// critical findings are returned, each with the elements it concerns.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Finding {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

export async function seriousViolations(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE);
  const found = (await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(' ') + ' — ' + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 160)),
  })))`)) as Finding[];
  return found.filter((f) => f.impact === 'serious' || f.impact === 'critical');
}
