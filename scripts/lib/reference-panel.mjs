// The reference implementation's web panel (autossh-tunnel-dockerized v2.3.1, a Go
// server with its static JS), built from its own sources so that the suite can point it
// at our daemon. Used by tests/e2e/panel/reference-panel.test.ts and scripts/test.
//
// Sources, in order: REFERENCE_REPO when set (a clone's path, a git bundle or a git URL;
// it is then the only one tried, so that a wrong setting is reported, not worked around),
// else the git bundle ../shared/reference/autossh-tunnel-dockerized.bundle next to the
// repository (every development machine and CI have it: no network needed), else GitHub.
// Checked out at the tag into REFERENCE_CACHE (default ~/.cache/tunnel-manager/...).
// Its one dependency, gorilla/websocket, comes from Debian's
// golang-github-gorilla-websocket-dev when installed (no network needed), else from
// the Go module proxy.
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REFERENCE_TAG = 'v2.3.1';
const GITHUB_REPO = 'https://github.com/Oaklight/autossh-tunnel-dockerized.git';
export const REFERENCE_BUNDLE = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../shared/reference/autossh-tunnel-dockerized.bundle',
);
const DEBIAN_WEBSOCKET = '/usr/share/gocode/src/github.com/gorilla/websocket';

function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });
  } catch (e) {
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim();
    throw new Error(`${cmd} ${args.join(' ')} failed: ${out || e.message}`, { cause: e });
  }
}

/** Where the reference's sources come from, and why that one (for messages). */
export function referenceSource(env = process.env) {
  if (env.REFERENCE_REPO) return { repo: env.REFERENCE_REPO, why: 'REFERENCE_REPO' };
  if (existsSync(REFERENCE_BUNDLE)) return { repo: REFERENCE_BUNDLE, why: 'the bundle next to the repository' };
  return { repo: GITHUB_REPO, why: `REFERENCE_REPO is not set and there is no ${REFERENCE_BUNDLE}` };
}

/** Where the panel is (its folder, which holds static/ and templates/) and its binary; builds it when missing. */
export function buildReferencePanel(env = process.env) {
  const cache = env.REFERENCE_CACHE || join(homedir(), '.cache', 'tunnel-manager', `autossh-tunnel-dockerized-${REFERENCE_TAG}`);
  const web = join(cache, 'web');
  const bin = join(web, 'reference-panel');
  if (existsSync(bin)) return { web, bin };

  if (!existsSync(join(web, 'main.go'))) {
    const { repo, why } = referenceSource(env);
    const tmp = `${cache}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    try {
      // --depth only for a URL: git ignores it (with a warning) for a path or a bundle.
      const shallow = /^[a-z+]+:\/\//.test(repo) ? ['--depth', '1'] : [];
      run('git', ['clone', '--quiet', ...shallow, '--branch', REFERENCE_TAG, repo, tmp]);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(
        `cannot get the reference implementation ${REFERENCE_TAG} from ${repo} (${why}): ${e.message}\n` +
          'set REFERENCE_REPO to a clone or a git bundle of Oaklight/autossh-tunnel-dockerized (a path works) and run again',
        { cause: e },
      );
    }
    rmSync(cache, { recursive: true, force: true });
    renameSync(tmp, cache);
  }

  try {
    run('go', ['version']);
  } catch {
    throw new Error('Go is not installed: apt-get install -y golang-go golang-github-gorilla-websocket-dev (scripts/test installs them)');
  }
  const args = ['build', '-o', bin];
  const goEnv = { ...process.env, GOFLAGS: '-mod=mod' };
  if (existsSync(join(DEBIAN_WEBSOCKET, 'go.mod'))) {
    // The same module from Debian's package, so the build needs no network; go 1.19
    // (Debian 12) builds this code although its go.mod asks for 1.24.
    writeFileSync(
      join(web, 'go.offline.mod'),
      `module app\n\ngo 1.19\n\nrequire github.com/gorilla/websocket v1.5.3\n\nreplace github.com/gorilla/websocket => ${DEBIAN_WEBSOCKET}\n`,
    );
    args.push('-modfile=go.offline.mod');
    goEnv.GOPROXY = 'off';
  }
  args.push('.');
  run('go', args, { cwd: web, env: goEnv });
  return { web, bin };
}

// `node scripts/lib/reference-panel.mjs` builds it and prints where it is.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { bin } = buildReferencePanel();
  console.log(bin);
}
