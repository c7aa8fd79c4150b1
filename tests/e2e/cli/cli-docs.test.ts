// docs/control.md's examples, run as written against the built daemon and a real sshd;
// their outputs must match the ones the page shows.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS helper shared with the scripts
import { portIsFree } from '../../../scripts/lib/sshd.mjs';
import { examples, fences, matchesOutput, runExample } from '../cli-docs-blocks.js';
import { CLI, REPO, port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

const PAGE = join(REPO, 'docs/control.md');
const markdown = readFileSync(PAGE, 'utf8');
const TOKEN = 's3cret-token';

let server: Sshd;
let daemon: Daemon;
let bin: string;

function run(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return runExample('bash', ['-o', 'pipefail', '-c', `exec 2>&1\n${script}`], { env });
}

describe('docs/control.md', () => {
  beforeAll(async () => {
    expect(markdown).toContain(`export TUNNEL_API_TOKEN=${TOKEN}`);
    const config = fences(markdown).find((f) => f.lang === 'yaml');
    if (!config) throw new Error('docs/control.md has no yaml config block');
    for (const p of [15432, 18081]) {
      if (!(await portIsFree(p))) throw new Error(`port ${p}, used by the examples, is taken on this machine`);
    }
    server = await sshd();
    // The page's tunnels go through the Host "bastion": the test server under that name.
    const sshConfig = readFileSync(server.sshConfigPath, 'utf8');
    const testhost = sshConfig.slice(sshConfig.indexOf('Host testhost'), sshConfig.indexOf('Host badkey'));
    writeFileSync(server.sshConfigPath, `${sshConfig}\n${testhost.replace('Host testhost', 'Host bastion')}`);
    daemon = await startDaemon({ config: config.body, sshConfigPath: server.sshConfigPath, env: { TUNNEL_API_TOKEN: TOKEN }, apiPort: await port() });
    bin = mkdtempSync(join(tmpdir(), 'tm-docs-bin-'));
    writeFileSync(join(bin, 'tunnel-cli'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, 'tunnel-cli'), 0o755);
    await daemon.waitFor('both tunnels RUNNING', async () => {
      const r = await fetch(`http://127.0.0.1:${daemon.apiPort}/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const all = (await r.json()) as Array<{ status: string }>;
      return all.length === 2 && all.every((t) => t.status === 'RUNNING');
    });
  }, 60_000);

  afterAll(async () => {
    await daemon?.cleanup();
    await server?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  /** Runs every sh example of `text` and compares its output with the text block after it. */
  async function runExamples(text: string, label: (line: number) => string, opts: { min: number; outputRequired: boolean }) {
    const list = examples(text);
    expect(list.length).toBeGreaterThanOrEqual(opts.min);
    const sub = (s: string) => s.replaceAll('127.0.0.1:8080', `127.0.0.1:${daemon.apiPort}`);
    const env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? '/root',
      TUNNEL_API_TOKEN: TOKEN,
      TUNNEL_SOCKET: daemon.socketPath,
    };
    for (const ex of list) {
      const { code, output } = await run(sub(ex.command), env);
      const where = `${label(ex.line)}\n${ex.command}\n--- output ---\n${output}`;
      expect(code, where).toBe(0);
      if (opts.outputRequired) expect(ex.expected, `${where}: the example shows no output`).not.toBeNull();
      if (ex.expected !== null) expect(matchesOutput(sub(ex.expected), output), `${where}--- expected ---\n${ex.expected}`).toBe(true);
    }
  }

  // The README's control section uses the same setup; it runs first, while both
  // tunnels are still RUNNING as its examples show.
  it("README.md's control examples run and print what the README shows", async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const start = readme.indexOf('## Control: API and CLI');
    expect(start).toBeGreaterThan(0);
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    await runExamples(section, (line) => `README.md (control section, line ${line})`, { min: 4, outputRequired: true });
  }, 120_000);

  it('every example runs and prints what the page shows', async () => {
    await runExamples(markdown, (line) => `docs/control.md:${line}`, { min: 11, outputRequired: false });
  }, 120_000);

  // docs/security.md's refusals and what still passes, on the same daemon (db RUNNING again after control.md's examples).
  it("docs/security.md's examples run and print what the page shows", async () => {
    const page = readFileSync(join(REPO, 'docs/security.md'), 'utf8');
    await runExamples(page, (line) => `docs/security.md:${line}`, { min: 2, outputRequired: true });
  }, 120_000);
});

describe('matchesOutput', () => {
  it('matches line by line with ... wildcards', () => {
    expect(matchesOutput('a ... c\n...\nend', 'a b c\nx\ny\nend\n')).toBe(true);
    expect(matchesOutput('a ... c', 'a b c\nextra')).toBe(false);
    expect(matchesOutput('a\n\nb', 'a\nb\n\n')).toBe(true);
    expect(matchesOutput('a (b)', 'a (c)')).toBe(false);
  });
});
