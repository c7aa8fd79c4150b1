// Compiles src/ to dist/ with tsc, saying what it does (a compile takes 10–45 s on a busy
// machine, and a silent wait looks like a hang). `npm run build` always compiles;
// `--if-needed` (npm start, scripts/test) skips the compile when dist/ was built from the
// sources as they are now, which it knows from a hash of them written after each build.
//
//   node scripts/build.mjs [--if-needed]
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist', '.source-hash');
const HEARTBEAT_MS = 5_000;
const say = (line) => process.stderr.write(`build: ${line}\n`);

/** A hash of what tsc reads: its config, the package manifest, and every file under src/. */
export function sourceHash(root = ROOT) {
  const h = createHash('sha256');
  const files = ['tsconfig.json', 'package.json'];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else files.push(relative(root, p));
    }
  };
  walk(join(root, 'src'));
  for (const f of files) h.update(`${f}\0`).update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}

/** Why dist/ must be rebuilt, or null when it was built from these very sources. */
export function staleBecause(root = ROOT) {
  if (!existsSync(join(root, 'dist', 'main.js'))) return 'dist/ has not been built yet';
  const stamp = join(root, 'dist', '.source-hash');
  if (!existsSync(stamp)) return 'dist/ was built by another command (no record of its sources)';
  return readFileSync(stamp, 'utf8').trim() === sourceHash(root) ? null : 'src/ changed since the last build';
}

function compile() {
  const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  const started = Date.now();
  const hash = sourceHash();
  rmSync(STAMP, { force: true });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
    const beat = setInterval(() => say(`still compiling (${Math.round((Date.now() - started) / 1000)} s)`), HEARTBEAT_MS);
    child.on('exit', (code, signal) => {
      clearInterval(beat);
      const s = ((Date.now() - started) / 1000).toFixed(1);
      if (code === 0) {
        writeFileSync(STAMP, `${hash}\n`);
        say(`dist/ built in ${s} s`);
        resolve(0);
      } else {
        say(`tsc failed after ${s} s (${signal ?? `exit ${code}`}); its errors are above`);
        resolve(code ?? 1);
      }
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ifNeeded = process.argv.includes('--if-needed');
  const why = ifNeeded ? staleBecause() : undefined;
  if (why === null) {
    say('dist/ is up to date with src/, not compiling');
  } else {
    say(`compiling src/ to dist/ with tsc${why ? ` (${why})` : ''}; this takes 10–45 s`);
    process.exitCode = await compile();
  }
}
