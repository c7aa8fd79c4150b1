// A provider bound to a tunnel by name (`gpu1: {tunnel: llm, path: /v1}`), served by
// the built daemon: a real ssh -L through the suite's sshd to the mock model server.
// Works while the tunnel is RUNNING, is refused at once naming the tunnel and its
// state while it is not, and follows the tunnel's local end through an edit. The
// daemon's /metrics carries the proxy's series. `tunnel-manager proxy` alone refuses
// such a provider and serves its own /metrics.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../proxy/mock-upstream.js';
import { CLI, MAIN, port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let upstream: MockUpstream;
let daemon: Daemon;

const config = (localPort: number) =>
  [
    'tunnels:',
    '  - name: llm',
    '    remote_host: testhost',
    `    remote_port: ${upstream.port}`,
    `    local_port: ${localPort}`,
    '    direction: remote_to_local',
    'proxy:',
    '  default_timeout: 30',
    '  providers:',
    '    gpu1: { tunnel: llm, path: /v1, api_key: "${GPU1_KEY}" }',
    '  aliases:',
    '    gpt-4o-mini: gpu1:llama3:8b',
    '',
  ].join('\n');

beforeAll(async () => {
  server = await sshd();
  upstream = await startMockUpstream();
  daemon = await startDaemon({ sshConfigPath: server.sshConfigPath, env: { GPU1_KEY: 'sk-upstream-tunnel-5678' }, config: config(await port()) });
  await daemon.waitState('llm', 'RUNNING');
});
afterAll(async () => {
  await daemon?.cleanup();
  await upstream?.close();
  await server?.stop();
});

const client = () => new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${daemon.apiPort}/v1`, maxRetries: 0 });
const ask = (model = 'gpt-4o-mini') => client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
const cli = async (...args: string[]) => {
  const child = spawn(process.execPath, [CLI, '--socket', daemon.socketPath, ...args], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
};

describe('a provider bound to a tunnel, through the daemon', () => {
  it('answers through the tunnel while it is RUNNING', async () => {
    const before = upstream.received.length;
    const r = await ask();
    expect(r.choices[0]?.message.content).toBe('hello from the mock');
    expect(upstream.received[before]!.json?.model).toBe('llama3:8b');
    expect(upstream.received[before]!.headers.authorization).toBe('Bearer sk-upstream-tunnel-5678');
  });

  it('is refused at once, naming the tunnel and its state, while the tunnel is stopped; works again once it runs', async () => {
    const t = await daemon.waitState('llm', 'RUNNING');
    await cli('stop-tunnel', t.hash.slice(0, 8));
    await daemon.waitState('llm', 'STOPPED');
    const before = upstream.received.length;
    const e = await ask().then(() => null, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
    expect(e?.status).toBe(503);
    expect(e?.message).toContain("provider \"gpu1\" is the local end of tunnel 'llm', which is STOPPED, not RUNNING");
    expect(upstream.received.length).toBe(before);
    await cli('start-tunnel', t.hash.slice(0, 8));
    await daemon.waitState('llm', 'RUNNING');
    expect((await ask()).choices[0]?.message.content).toBe('hello from the mock');
  });

  it('follows the tunnel\'s local end when its local_port is edited', async () => {
    const moved = await port();
    daemon.writeConfig(config(moved));
    await daemon.waitFor('the tunnel on its new port', async () => {
      const all = await daemon.json<{ name: string; status: string; local_port: string }[]>('/status');
      return all.some((x) => x.name === 'llm' && x.status === 'RUNNING' && String(x.local_port).endsWith(String(moved)));
    });
    const before = upstream.received.length;
    expect((await ask('gpu1:qwen2')).choices[0]?.message.content).toBe('hello from the mock');
    expect(upstream.received[before]!.json?.model).toBe('qwen2');
  });

  it('the daemon\'s /metrics has the proxy\'s series next to the tunnels\'', async () => {
    const text = await (await daemon.api('/metrics')).text();
    expect(text).toMatch(/^tunnel_up\{/m);
    expect(text).toMatch(/^proxy_requests_total\{provider="gpu1",endpoint="\/chat\/completions",status="200"\} [1-9]/m);
    expect(text).toMatch(/^proxy_requests_total\{provider="gpu1",endpoint="\/chat\/completions",status="503"\} 1$/m);
    expect(daemon.stderr()).toMatch(/"event":"proxy_request".*"provider":"gpu1".*"status":200/);
    expect(daemon.stderr()).not.toContain('sk-upstream-tunnel-5678');
  });
});

describe('tunnel-manager proxy alone', () => {
  it('refuses a tunnel-bound provider with a clear message, says so in its log, and serves its own /metrics', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tm-proxy-'));
    const p = await port();
    writeFileSync(join(dir, 'config.yaml'), `proxy:\n  providers:\n    gpu1: { tunnel: llm }\n    direct: { base_url: "${upstream.baseUrl}" }\n`);
    let log = '';
    const child = spawn(process.execPath, [MAIN, 'proxy', '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${p}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d) => (log += String(d)));
    try {
      const c = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${p}/v1`, maxRetries: 0 });
      let ok = false;
      for (let i = 0; i < 100 && !ok; i++) {
        ok = await fetch(`http://127.0.0.1:${p}/v1/models`).then((r) => r.ok, () => false);
        if (!ok) await new Promise((r) => setTimeout(r, 100));
      }
      const e = await c.chat.completions.create({ model: 'gpu1:m', messages: [{ role: 'user', content: 'hi' }] }).then(() => null, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
      expect(e?.status).toBe(503);
      expect(e?.code).toBe('tunnel_unavailable');
      expect((await c.chat.completions.create({ model: 'direct:m', messages: [{ role: 'user', content: 'hi' }] })).choices[0]?.message.content).toBe('hello from the mock');
      const metrics = await (await fetch(`http://127.0.0.1:${p}/metrics`)).text();
      expect(metrics).toMatch(/^proxy_requests_total\{provider="direct",endpoint="\/chat\/completions",status="200"\} 1$/m);
      expect(log).toContain('"event":"proxy_tunnel_unavailable"');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
