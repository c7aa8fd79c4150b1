// Dockerfile, .dockerignore, compose.yaml and docs/docker.md
// say the same things: parsed, not grepped, wherever a parser exists.
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { parse } from 'yaml';
import { REPO, dockerfileEnv } from './fixture.js';

const read = (p: string) => readFile(join(REPO, p), 'utf8');

interface Instruction { op: string; args: string; stage: number }

/** Dockerfile instructions, continuation lines joined, comments dropped. */
async function dockerfile(): Promise<Instruction[]> {
  const text = (await read('Dockerfile')).replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = -1;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\w+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] as string).toUpperCase();
    if (op === 'FROM') stage++;
    out.push({ op, args: (m[2] as string).replace(/\s+/g, ' '), stage });
  }
  return out;
}

/** Docker's .dockerignore rule: the last pattern matching the path or a parent decides. */
function dockerIgnored(patterns: string[], path: string): boolean {
  const toRe = (p: string) =>
    new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\u0000/g, '.*')}$`);
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const neg = raw.startsWith('!');
    const pat = posix.normalize(neg ? raw.slice(1) : raw).replace(/\/$/, '');
    if (prefixes.some((p) => toRe(pat).test(p))) ignored = !neg;
  }
  return ignored;
}

async function compose(): Promise<any> {
  return parse(await read('compose.yaml'));
}

describe('Dockerfile', () => {
  it('builds in stages: dev dependencies + build, then production dependencies only', async () => {
    const ins = await dockerfile();
    const froms = ins.filter((i) => i.op === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(3);
    expect(ins.find((i) => i.op === 'ARG' && i.args.startsWith('NODE_IMAGE='))?.args).toBe('NODE_IMAGE=node:20-bookworm-slim');
    const runs = ins.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /npm ci(?! --omit)/.test(r))).toBe(true);
    expect(runs.some((r) => r.includes('npm run build'))).toBe(true);
    expect(runs.some((r) => r.includes('npm ci --omit=dev'))).toBe(true);
    // Node >= 20.19 is asserted at build time.
    expect(runs.some((r) => r.includes('Node >= 20.19'))).toBe(true);
    // The runtime stage gets no dev dependencies: its node_modules come from the deps stage.
    const last = froms.length - 1;
    const copies = ins.filter((i) => i.stage === last && i.op === 'COPY').map((i) => i.args);
    expect(copies).toContain('--from=deps /app/node_modules ./node_modules');
    expect(ins.filter((i) => i.stage === last && i.op === 'RUN').some((i) => i.args.includes('npm ci'))).toBe(false);
  });

  it('has openssh-client and tini as PID 1, a healthcheck, the ports, labels', async () => {
    const ins = await dockerfile();
    const run = ins.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');
    expect(run).toMatch(/apt-get install -y --no-install-recommends openssh-client tini/);
    const entry = ins.filter((i) => i.op === 'ENTRYPOINT').at(-1);
    expect(JSON.parse(entry?.args ?? '[]')).toEqual(['/usr/bin/tini', '--', '/usr/local/bin/tunnel-entrypoint']);
    const health = ins.find((i) => i.op === 'HEALTHCHECK')?.args ?? '';
    expect(health).toContain('CMD ["node", "/usr/local/lib/tunnel-manager/healthcheck.mjs"]');
    expect(ins.find((i) => i.op === 'EXPOSE')?.args.split(' ').sort()).toEqual(['5000', '8080']);
    expect(ins.find((i) => i.op === 'LABEL')?.args).toContain('org.opencontainers.image.title="tunnel-manager"');
    // No USER: the entrypoint needs root to apply PUID/PGID, then drops it.
    expect(ins.some((i) => i.op === 'USER')).toBe(false);
  });

  it('copies only files that exist and that .dockerignore lets into the context', async () => {
    const ins = await dockerfile();
    const ignore = (await read('.dockerignore')).split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    const sources = ins
      .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(' ').slice(0, -1));
    expect(sources.length).toBeGreaterThanOrEqual(5);
    for (const s of sources) {
      expect(existsSync(join(REPO, s)), s).toBe(true);
      expect(dockerIgnored(ignore, s.replace(/\/$/, '')), `${s} is excluded by .dockerignore`).toBe(false);
    }
    for (const secret of ['config/config.yaml', 'node_modules/yaml/package.json', '.git/HEAD', 'dist/main.js', '.env']) {
      expect(dockerIgnored(ignore, secret), secret).toBe(true);
    }
  });

  it('sets every variable the entrypoint reads, except the ones the user gives', async () => {
    const env = await dockerfileEnv();
    const script = await read('docker/entrypoint.sh');
    const read_ = new Set([...script.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string));
    const assigned = new Set([...script.matchAll(/^\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string));
    const fromUser = ['PUID', 'PGID', 'TUNNEL_API_TOKEN', 'PANEL_TOKEN', 'SSH_DIR_HOST'];
    const required = /for name in ([A-Z_ ]+); do/.exec(script)?.[1]?.split(' ') ?? [];
    expect(required).toEqual(['SSH_DIR', 'SSH_CONFIG', 'TUNNEL_CONFIG', 'TUNNEL_STATE_DIR', 'TUNNEL_SOCKET']);
    for (const name of required) expect(env[name], name).toMatch(/^\//);
    for (const name of read_) {
      if (fromUser.includes(name) || (assigned.has(name) && !required.includes(name) && name !== 'PUID' && name !== 'PGID')) continue;
      expect(Object.keys(env), `the entrypoint reads ${name}`).toContain(name);
    }
    expect(env.TUNNEL_USER).toBe('tunnel');
    expect(env.SSH_CONFIG).toBe(`${env.SSH_DIR}/config`);
    expect(env.HOME && env.SSH_DIR?.startsWith(`${env.HOME}/`)).toBe(true);
    // The account the entrypoint renumbers is created with the home the SSH dir lives in.
    const run = (await dockerfile()).filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');
    expect(run).toContain(`useradd --uid 911 --gid tunnel --home-dir ${env.HOME}`);
  });
});

describe('compose.yaml', () => {
  it('runs the daemon on the host network with config, ~/.ssh read-only, state, PUID/PGID', async () => {
    const env = await dockerfileEnv();
    const c = await compose();
    const d = c.services['tunnel-manager'];
    expect(d.build).toBe('.');
    expect(d.network_mode).toBe('host');
    expect(d.ports).toBeUndefined();
    expect(d.restart).toBe('unless-stopped');
    expect(d.volumes).toContain(`./config:${posix.dirname(env.TUNNEL_CONFIG as string)}`);
    expect(d.volumes).toContain(`\${SSH_DIR_HOST:-~/.ssh}:${env.SSH_DIR}:ro`);
    expect(d.volumes).toContain(`state:${env.TUNNEL_STATE_DIR}`);
    expect(Object.keys(c.volumes)).toEqual(['state']);
    expect(Object.keys(d.environment).sort()).toEqual(
      ['API_KEY', 'API_PORT', 'PGID', 'PUID', 'SSH_DIR_HOST', 'TUNNEL_API_ALLOWED_HOSTS', 'TUNNEL_API_LISTEN', 'TUNNEL_API_TOKEN', 'TUNNEL_DIRECTION_MODE'].sort(),
    );
    // Unset, the entrypoint uses 1000 (as autossh-tunnel-dockerized did) and says so.
    expect(d.environment.PUID).toBe("${PUID:-}");
    expect(d.environment.API_KEY).toBe("${API_KEY:-}");
    expect(d.environment.TUNNEL_DIRECTION_MODE).toBe('${TUNNEL_DIRECTION_MODE:-default}');
    // Passed through, empty when unset, so that the daemon applies API_PORT or its default
    // (no default here, and none in the Dockerfile, that would hide API_PORT).
    expect(d.environment.TUNNEL_API_LISTEN).toBe('${TUNNEL_API_LISTEN:-}');
    expect(d.environment.API_PORT).toBe('${API_PORT:-}');
    expect(env.TUNNEL_API_LISTEN).toBeUndefined();
    expect(env.TUNNEL_API_URL).toBeUndefined();
    expect(d.healthcheck.test).toEqual(['CMD', 'node', '/usr/local/lib/tunnel-manager/healthcheck.mjs']);
  });

  it('has a panel on port 5000 sharing ./config, which can be removed', async () => {
    const env = await dockerfileEnv();
    const c = await compose();
    const p = c.services.panel;
    expect(p.command).toEqual(['panel']);
    expect([p.build, p.image]).toEqual(['.', c.services['tunnel-manager'].image]);
    expect(p.network_mode).toBe('host');
    expect(p.restart).toBe('unless-stopped');
    expect(p.volumes).toContain(`./config:${posix.dirname(env.TUNNEL_CONFIG as string)}`);
    expect(p.environment.PANEL_LISTEN).toBe('${PANEL_LISTEN:-127.0.0.1:5000}');
    // The panel finds the daemon by the same variables the daemon listens by.
    expect([p.environment.TUNNEL_API_URL, p.environment.TUNNEL_API_LISTEN, p.environment.API_PORT]).toEqual(['${TUNNEL_API_URL:-}', '${TUNNEL_API_LISTEN:-}', '${API_PORT:-}']);
    expect(Object.keys(p.environment)).toEqual(
      expect.arrayContaining(['PUID', 'PGID', 'PANEL_TOKEN', 'TUNNEL_API_URL', 'TUNNEL_API_TOKEN']),
    );
    expect(p.healthcheck.test).toEqual(['CMD', 'node', '/usr/local/lib/tunnel-manager/healthcheck.mjs', 'panel']);
    // Nothing else refers to the panel: deleting its section leaves a valid file.
    const { panel: _removed, ...rest } = c.services;
    expect(JSON.stringify(rest)).not.toMatch(/panel/i);
  });

  it('explains host networking in a comment', async () => {
    expect(await read('compose.yaml')).toMatch(/# Host networking, on purpose: a remote_to_local tunnel \(-L\)/);
  });
});

describe('docs/docker.md', () => {
  it('names every setting compose.yaml passes and every mount', async () => {
    const doc = await read('docs/docker.md');
    const c = await compose();
    for (const svc of Object.values<any>(c.services)) {
      for (const name of Object.keys(svc.environment)) expect(doc, name).toContain(`\`${name}\``);
      for (const v of svc.volumes) expect(doc, v).toContain(v);
    }
    for (const cmd of [
      `printf 'PUID=%s\\nPGID=%s\\n' "$(id -u)" "$(id -g)" > .env`,
      'docker compose up -d --build',
      'docker compose exec tunnel-manager tunnel-cli status',
      'docker compose run --rm tunnel-manager check',
      'chmod 700 ~/.ssh',
      'chmod 600 ~/.ssh/config',
      'deploy/kubernetes',
    ]) {
      expect(doc, cmd).toContain(cmd);
    }
  });
});

describe("README's Run with Docker section", () => {
  it('gives the same start commands as docs/docker.md and links it', async () => {
    const readme = await read('README.md');
    const start = readme.indexOf('## Run with Docker');
    expect(start).toBeGreaterThan(0);
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const doc = await read('docs/docker.md');
    for (const cmd of ['mkdir -p config', `printf 'PUID=%s\\nPGID=%s\\n' "$(id -u)" "$(id -g)" > .env`, 'docker compose up -d --build']) {
      expect(section, cmd).toContain(cmd);
      expect(doc, cmd).toContain(cmd);
    }
    expect(section).toContain('docs/docker.md');
    // What the section promises about compose.yaml holds.
    const c = await compose();
    expect(c.services['tunnel-manager'].network_mode).toBe('host');
    expect(c.services['tunnel-manager'].environment).toHaveProperty('PUID');
  });
});
