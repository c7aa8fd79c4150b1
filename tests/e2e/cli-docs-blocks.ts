// Reads the examples of a Markdown page: the fenced blocks in order, and for every
// ```sh block the ```text block right after it (its expected output), if any.
import { spawn } from 'node:child_process';

export interface Fence {
  lang: string;
  body: string;
  line: number;
}

export interface Example {
  command: string;
  expected: string | null;
  line: number;
}

export function fences(markdown: string): Fence[] {
  const out: Fence[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    out.push({ lang: open[1] ?? '', body: body.join('\n'), line: start + 1 });
  }
  return out;
}

export function examples(markdown: string): Example[] {
  const fs = fences(markdown);
  const out: Example[] = [];
  fs.forEach((f, i) => {
    if (f.lang !== 'sh') return;
    const next = fs[i + 1];
    out.push({ command: f.body, expected: next?.lang === 'text' ? next.body : null, line: f.line });
  });
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `actual` matches `expected` line by line. Blank lines are ignored on both
 * sides; `...` inside a line matches any text, and a line that is only `...` matches
 * any number of lines.
 */
export function matchesOutput(expected: string, actual: string): boolean {
  const exp = expected.split('\n').filter((l) => l.trim() !== '');
  const act = actual.split('\n').filter((l) => l.trim() !== '');
  const pattern = (l: string) => new RegExp(`^${l.split('...').map(escape).join('.*')}$`);
  const go = (e: number, a: number): boolean => {
    if (e === exp.length) return a === act.length;
    const line = exp[e] as string;
    if (line.trim() === '...') {
      for (let k = a; k <= act.length; k++) if (go(e + 1, k)) return true;
      return false;
    }
    return a < act.length && pattern(line).test((act[a] as string).trimEnd()) && go(e + 1, a + 1);
  };
  return go(0, 0);
}

/** Runs a documentation example's command; stdout and stderr together, killed after 30 s. */
export function runExample(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
