// docs/kubernetes.md and docs/systemd.md, command by command. What runs here is run
// (kustomize, kubectl's offline secret making, the daemon's and the CLI's flags,
// systemd-analyze); what needs a cluster or a running systemd has what it names
// checked instead: the objects, units, files and paths exist as written. A command
// of a form this test does not know fails it, so a new one cannot go unchecked.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import { fences } from '../e2e/cli-docs-blocks.js';
import { CLI, MAIN, REPO } from '../e2e/daemon-harness.js';

const read = (p: string) => readFileSync(join(REPO, p), 'utf8');

/** The commands of a page's ```sh blocks, continuation lines joined and `&&` chains split. */
function commands(page: string): string[] {
  return fences(read(page))
    .filter((f) => f.lang === 'sh')
    .flatMap((f) => f.body.replace(/\\\n\s*/g, '').split('\n'))
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .flatMap((l) => l.split(' && '));
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tm-deploy-docs-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Everything `kubectl apply -k` would create from the base and the overlay: kind/name. */
function clusterObjects(): Set<string> {
  const out = new Set<string>();
  for (const dir of ['deploy/kubernetes', 'deploy/kubernetes/overlays/second-host']) {
    const text = execFileSync('kubectl', ['kustomize', join(REPO, dir)], { encoding: 'utf8' });
    for (const d of parseAllDocuments(text, { version: '1.1' })) {
      const o = d.toJS() as { kind: string; metadata: { name: string } };
      out.add(`${o.kind}/${o.metadata.name}`);
    }
  }
  return out;
}

const KIND: Record<string, string> = { deploy: 'Deployment', hpa: 'HorizontalPodAutoscaler', svc: 'Service' };

/**
 * Runs a CLI of ours with `args` (no daemon runs: a client command fails to connect,
 * which is fine): it must know the command and every flag.
 */
async function knows(bin: string, args: string[]): Promise<void> {
  const r = await execa(process.execPath, [bin, ...args], { reject: false, env: { PATH: process.env.PATH!, TUNNEL_SOCKET: join(tmp, 'none.sock') }, extendEnv: false });
  expect(`${r.stdout}${r.stderr}`, `${bin} ${args.join(' ')}`).not.toMatch(/unknown option|unknown command|unused args/i);
}

describe('docs/kubernetes.md and deploy/kubernetes/README.md', () => {
  it.each(['docs/kubernetes.md', 'deploy/kubernetes/README.md'])('%s: every command runs here or names objects the manifests create', async (page) => {
    const objects = clusterObjects();
    const secretsUsed = read('deploy/kubernetes/daemon/deployment.yaml') + read('deploy/kubernetes/proxy/deployment.yaml');
    const unknown: string[] = [];
    for (const cmd of commands(page)) {
      let m: RegExpExecArray | null;
      if ((m = /^kubectl (?:kustomize|apply -k) (\S+)$/.exec(cmd))) {
        execFileSync('kubectl', ['kustomize', join(REPO, m[1]!)], { stdio: 'pipe' });
      } else if ((m = /^kubectl create secret generic (\S+) (.+)$/.exec(cmd))) {
        // Run as written, offline: the files it reads made in a scratch folder.
        const dir = join(tmp, m[1]!);
        mkdirSync(join(dir, 'ssh'), { recursive: true });
        for (const f of m[2]!.matchAll(/--from-file=\w+=(\S+)/g)) writeFileSync(join(dir, f[1]!), 'x\n');
        const out = execFileSync('bash', ['-c', `${cmd} --dry-run=client -o yaml`], { cwd: dir, encoding: 'utf8' });
        expect(out).toContain(`name: ${m[1]}`);
        expect(secretsUsed, `the manifests use the Secret ${m[1]}`).toMatch(new RegExp(`(secretName|name): ${m[1]}\\n`));
      } else if ((m = /^kubectl (?:rollout status|logs|get) (deploy|hpa|svc)[/ ](\S+)$/.exec(cmd))) {
        expect(objects.has(`${KIND[m[1]!]}/${m[2]}`), cmd).toBe(true);
      } else if ((m = /^kubectl exec deploy\/(\S+) -- (tunnel-cli|tunnel-manager) (.+)$/.exec(cmd))) {
        expect(objects.has(`Deployment/${m[1]}`), cmd).toBe(true);
        await knows(m[2] === 'tunnel-cli' ? CLI : MAIN, m[3]!.split(' '));
      } else if (/^docker (?:build -t \S+\/tunnel-manager:\S+ \.|push \S+\/tunnel-manager:\S+)$/.test(cmd)) {
        // Not here (no registry, no base image): the build context is the repository's Dockerfile.
        expect(existsSync(join(REPO, 'Dockerfile'))).toBe(true);
      } else {
        unknown.push(cmd);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('names every file of deploy/kubernetes it describes', () => {
    const doc = read('docs/kubernetes.md');
    for (const f of ['daemon/deployment.yaml', 'daemon/config.yaml', 'proxy/config.yaml', 'overlays/second-host', 'kustomization.yaml']) {
      expect(doc).toContain(f);
      expect(existsSync(join(REPO, 'deploy/kubernetes', f)), f).toBe(true);
    }
  });
});

describe('docs/systemd.md', () => {
  it('every command runs here or names units, files and paths that exist as written', async () => {
    const pkg = JSON.parse(read('package.json')) as { name: string; version: string };
    const unitText = read('deploy/systemd/tunnel-manager.service');
    const unknown: string[] = [];
    for (const cmd of commands('docs/systemd.md')) {
      let m: RegExpExecArray | null;
      if (cmd === 'npm ci' || cmd === 'npm run build') {
        // What the suite itself runs before the tests.
      } else if (cmd === 'npm pack') {
        const out = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: REPO, encoding: 'utf8' });
        expect((JSON.parse(out) as { filename: string }[])[0]!.filename).toBe(`${pkg.name}-${pkg.version}.tgz`);
      } else if ((m = /^sudo npm install -g \.\/(\S+)$/.exec(cmd))) {
        expect(m[1]).toBe(`${pkg.name}-${pkg.version}.tgz`);
      } else if ((m = /^command -v (.+)$/.exec(cmd))) {
        const bins = Object.keys((JSON.parse(read('package.json')) as { bin: Record<string, string> }).bin);
        expect(m[1]!.split(' ').sort()).toEqual(bins.sort());
      } else if (/^sudo useradd --system --create-home --home-dir \/home\/tunnel .* tunnel$/.test(cmd) || /^sudo install -d -m 700 -o tunnel -g tunnel \/(home\/tunnel\/\.ssh|var\/lib\/tunnel-manager)$/.test(cmd)) {
        // The account and folders the unit names.
        expect(unitText).toContain('User=tunnel');
        expect(unitText).toContain('StateDirectory=tunnel-manager');
      } else if (cmd === 'sudo install -d -m 755 /etc/tunnel-manager' || cmd === 'mkdir -p ~/.config/systemd/user ~/.config/tunnel-manager') {
        // Folders the units read from (ConfigurationDirectory=tunnel-manager).
        expect(unitText).toContain('ConfigurationDirectory=tunnel-manager');
      } else if ((m = /^(?:sudo install -m 644|cp) (\S+) (\S+)$/.exec(cmd))) {
        expect(existsSync(join(REPO, m[1]!)), m[1]).toBe(true);
        expect(m[2]).toMatch(/^(\/etc\/systemd\/system\/|~\/\.config\/systemd\/user\/|\/etc\/tunnel-manager\/config\.yaml|~\/\.config\/tunnel-manager\/config\.yaml)$/);
      } else if ((m = /^sudo -u tunnel tunnel-manager check (.+)$/.exec(cmd))) {
        // The same flags, run here: a real check of the repository's config.
        const args = m[1]!.replace('/etc/tunnel-manager/config.yaml', join(REPO, 'config/config.yaml')).replace('/var/lib/tunnel-manager', join(tmp, 'state')).split(' ');
        mkdirSync(join(tmp, 'state'), { recursive: true, mode: 0o700 });
        const r = await execa(process.execPath, [MAIN, 'check', ...args], { reject: false });
        expect(r.stderr).toBe('');
        expect(r.stdout).toContain(`config file:     ${join(REPO, 'config/config.yaml')}`);
      } else if ((m = /^(?:sudo )?tunnel-cli (.+)$/.exec(cmd))) {
        if (m[1]!.startsWith('--socket')) expect(m[1]).toContain('/run/tunnel-manager/api.sock status');
        expect(unitText).toContain('RuntimeDirectory=tunnel-manager');
        await knows(CLI, m[1]!.split(' '));
      } else if ((m = /^(?:sudo )?systemctl (?:--user )?(daemon-reload|enable --now|disable --now|reload|list-units --all)( .+)?$/.exec(cmd))) {
        for (const name of (m[2] ?? '').trim().split(' ').filter(Boolean)) {
          // Ours, or the autossh instances of the example being replaced.
          expect(name, cmd).toMatch(/^(tunnel-manager|autossh@\S+|'autossh@\*')$/);
        }
      } else if (cmd === 'journalctl -u tunnel-manager -f' || cmd === 'loginctl enable-linger "$USER"') {
        // The unit's name; lingering is the user manager's own.
      } else {
        unknown.push(cmd);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('the migrated config loads as the daemon loads it, with one tunnel each way', async () => {
    const yaml = fences(read('docs/systemd.md')).find((f) => f.lang === 'yaml')!.body;
    const file = join(tmp, 'migrated.yaml');
    writeFileSync(file, yaml);
    const r = await loadConfigFile(file, { mode: 'default' });
    expect(r.kind).toBe('ok');
    if (r.kind !== 'ok') return;
    expect(r.config.tunnels.map((t) => t.direction)).toEqual(['remote_to_local', 'local_to_remote']);
  });
});

describe('README and deploy/kubernetes/README.md', () => {
  it('link both pages', () => {
    const readme = read('README.md');
    expect(readme).toContain('(docs/kubernetes.md)');
    expect(readme).toContain('(docs/systemd.md)');
    expect(read('deploy/kubernetes/README.md')).toContain('docs/kubernetes.md');
  });
});
