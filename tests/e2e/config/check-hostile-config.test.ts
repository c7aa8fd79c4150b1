// `tunnel-manager check`, the built command as a real process, on config files written
// to cost the YAML parser as much as 1 MiB can (tests/unit/config/hostile-yaml.ts): each is
// refused with its line and column, or read, within seconds and 150 MB of the memory
// the same command takes on an empty config. Before the loader's limits, `check` on
// half a MiB of `[` died out of memory after 8 s.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { HOSTILE_FILES } from '../../unit/config/hostile-yaml.js';
import { MAIN } from '../daemon-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'tm-check-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The process's own peak resident set, written as it exits (Node has no rusage of children).
const PEAK = 'data:text/javascript,import { writeSync } from "node:fs"; process.on("exit", () => writeSync(2, `\\npeak-rss-kib=${process.resourceUsage().maxRSS}\\n`));';

// Two checks at once at most: each is a CPU-bound process, and the suite's other
// files run beside this one on two cores.
let files = 0;
let running = 0;
const waiting: (() => void)[] = [];
async function check(config: string): Promise<{ code: number | null; stdout: string; peakMiB: number; ms: number }> {
  while (running >= 2) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await checkOnce(config);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function checkOnce(config: string): Promise<{ code: number | null; stdout: string; peakMiB: number; ms: number }> {
  // A file of its own for each run: two may be checked at once.
  const path = join(dir, `config-${files++}.yaml`);
  writeFileSync(path, config);
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', PEAK, MAIN, 'check', '--config', path, '--ssh-config', '/dev/null', '--state-dir', join(dir, 'state')],
      { env: { PATH: process.env.PATH ?? '' }, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (e, stdout, stderr) => {
        const kib = Number(/peak-rss-kib=(\d+)/.exec(stderr)?.[1] ?? NaN);
        resolve({ code: e ? ((e as { code?: number | null }).code ?? null) : 0, stdout, peakMiB: kib / 1024, ms: Date.now() - started });
      },
    );
  });
}

let baseline = 0;
beforeAll(async () => {
  const r = await check('tunnels: []\n');
  expect(r.code).toBe(0);
  baseline = r.peakMiB;
  expect(baseline).toBeGreaterThan(0);
});

// Files within every limit: read (a warning for their unknown key), not refused.
const READ = new Set(['one scalar of 1 MiB', 'one double-quoted scalar of escapes']);

// Each `check` is a process of its own, measured on its own: two run at once.
test.concurrent.each(HOSTILE_FILES)('%s', async (name, text) => {
  const r = await check(text);
  const said = `${name}: exit ${r.code}, ${Math.round(r.peakMiB - baseline)} MB over ${Math.round(baseline)} MB, ${r.ms} ms\n${r.stdout.slice(0, 2000)}`;
  expect(r.peakMiB - baseline, said).toBeLessThan(150);
  if (READ.has(name)) {
    expect(r.code, said).toBe(0);
    expect(r.stdout, said).toContain('unknown key');
  } else {
    // 1: problems found, reported; not a crash (134) or a kill at the timeout (null).
    expect(r.code, said).toBe(1);
    expect(r.stdout, said).toMatch(/line \d+, column \d+: \(file\): expected .*, found /);
  }
}, 90_000);
