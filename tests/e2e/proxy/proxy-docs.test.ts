// docs/proxy.md's examples, run as written against the built daemon serving the page's
// own configuration, with its tunnel through a real sshd: only the addresses change
// (the model server is the mock upstream, the listener a free port instead of 8080).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../src/config/load.js';
import { startMockUpstream, type MockUpstream } from '../../proxy/mock-upstream.js';
import { fences, runExample } from '../cli-docs-blocks.js';
import { REPO, port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

const markdown = readFileSync(join(REPO, 'docs/proxy.md'), 'utf8');
const PROXY_KEY = 'sk-local-123';
// Set, as on a daemon that listens beyond loopback: the page's examples of the control
// API (the metrics) must carry it.
const TUNNEL_API_TOKEN = 'tok-docs-1';

let server: Sshd;
let upstream: MockUpstream;
let daemon: Daemon;
// Inside the repository, so that the scripts' imports resolve to its node_modules.
let scripts: string;

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return runExample(command, args, { env: { ...process.env, PROXY_KEY, TUNNEL_API_TOKEN }, cwd: scripts });
}

const here = (text: string) => text.replaceAll('127.0.0.1:8080', `127.0.0.1:${daemon.apiPort}`);

beforeAll(async () => {
  server = await sshd();
  upstream = await startMockUpstream();
  const yaml = fences(markdown).find((f) => f.lang === 'yaml');
  if (!yaml) throw new Error('docs/proxy.md has no yaml block');
  expect(yaml.body).toContain('remote_host: gpu-box');
  const config = yaml.body
    .replace('remote_host: gpu-box', 'remote_host: testhost')
    .replace('remote_port: 11434', `remote_port: ${upstream.port}`)
    .replace('"127.0.0.1:11434"', `"127.0.0.1:${await port()}"`)
    .replace('http://127.0.0.1:11435/v1', upstream.baseUrl)
    .replace('https://api.openai.com/v1', upstream.baseUrl)
    .replace('https://api.anthropic.com/v1', upstream.baseUrl);
  daemon = await startDaemon({ sshConfigPath: server.sshConfigPath, config, env: { PROXY_KEY, TUNNEL_API_TOKEN, OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-anthropic' } });
  await daemon.waitFor('llm RUNNING', async () => {
    const all = await daemon.json<{ name: string; status: string }[]>('/status', { headers: { authorization: `Bearer ${TUNNEL_API_TOKEN}` } });
    return all.find((t) => t.name === 'llm')?.status === 'RUNNING';
  });
  scripts = mkdtempSync(join(REPO, '.proxy-docs-'));
});
afterAll(async () => {
  if (scripts) rmSync(scripts, { recursive: true, force: true });
  await daemon?.cleanup();
  await upstream?.close();
  await server?.stop();
});

describe('docs/proxy.md', () => {
  it('the configuration is valid, without a warning', async () => {
    const file = join(scripts, 'config.yaml');
    writeFileSync(file, fences(markdown).find((f) => f.lang === 'yaml')!.body);
    const r = await loadConfigFile(file);
    expect(r.kind).toBe('ok');
    expect(r.kind === 'ok' && r.warnings).toEqual([]);
  });

  it('every sh example works as written', async () => {
    const blocks = fences(markdown).filter((f) => f.lang === 'sh');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const b of blocks) {
      const r = await run('bash', ['-o', 'pipefail', '-c', here(b.body)]);
      expect(r.code, `docs/proxy.md:${b.line}\n${r.output}`).toBe(0);
      expect(r.output, `docs/proxy.md:${b.line}`).not.toMatch(/"error": ?\{/);
    }
    const all = await run('bash', ['-c', here(blocks.find((b) => b.body.includes('through an alias'))!.body)]);
    expect(all.output.match(/hello from the mock/g)?.length).toBeGreaterThanOrEqual(3);
    expect(all.output).toContain('"id":"fast"');
    // A stored response fetched by its id reaches the provider that made it (not a 404).
    const before = upstream.received.length;
    const stored = await run('bash', ['-o', 'pipefail', '-c', here(blocks.find((b) => b.body.includes('/v1/responses/$id'))!.body)]);
    expect(stored.output).toMatch(/"id": ?"resp_/);
    expect(upstream.received.slice(before).map((r) => `${r.method} ${r.url.replace(/resp_\S+/, 'resp_…')}`)).toEqual(['POST /v1/responses', 'GET /v1/responses/resp_…']);
    // The metrics example, with the daemon's token set, finds the series.
    const metrics = await run('bash', ['-o', 'pipefail', '-c', here(blocks.find((b) => b.body.includes('/metrics'))!.body)]);
    expect(metrics.output).toMatch(/^proxy_requests_total\{/m);
  });

  it('every client example works as written', async () => {
    // All but the client-timeout one of "Timeouts", which needs a model slower than the mock.
    const blocks = fences(markdown).filter((f) => f.lang === 'js' && !f.body.includes('timeout: 1000'));
    expect(blocks.length).toBe(4);
    for (const [i, b] of blocks.entries()) {
      const file = join(scripts, `example-${i}.mjs`);
      writeFileSync(file, here(b.body));
      const r = await run(process.execPath, [file]);
      expect(r.code, `docs/proxy.md:${b.line}\n${r.output}`).toBe(0);
      expect(r.output, `docs/proxy.md:${b.line}`).toContain('hello from the mock');
    }
  });

  it('the Python example works as written, with Debian\'s requests and httpx', async () => {
    const blocks = fences(markdown).filter((f) => f.lang === 'python');
    expect(blocks.length).toBe(1);
    const file = join(scripts, 'chat.py');
    writeFileSync(file, here(blocks[0]!.body));
    // The system interpreter, for which python3-requests and python3-httpx are installed.
    const r = await run(process.env.PYTHON ?? '/usr/bin/python3', [file]);
    expect(r.code, `docs/proxy.md:${blocks[0]!.line}\n${r.output}`).toBe(0);
    expect(r.output.match(/hello from the mock/g)).toHaveLength(2);
  });
});
