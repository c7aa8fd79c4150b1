// The chat proxy as users run it: the built daemon serves /v1 on its listener, and the
// provider's base_url is the local end of one of the daemon's own tunnels, which leads
// through a real sshd to a model server (the mock upstream). The caller is the
// official openai client. Also `tunnel-manager proxy` served alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startMockUpstream, type MockUpstream } from '../../proxy/mock-upstream.js';
import { CLI, MAIN, port, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let upstream: MockUpstream;
let daemon: Daemon;
let localEnd: number;

beforeAll(async () => {
  server = await sshd();
  upstream = await startMockUpstream();
  localEnd = await port();
  daemon = await startDaemon({
    sshConfigPath: server.sshConfigPath,
    env: { GPU1_KEY: 'sk-upstream-secret-1234' },
    config: [
      'tunnels:',
      '  - name: llm',
      '    remote_host: testhost',
      `    remote_port: ${upstream.port}`,
      `    local_port: ${localEnd}`,
      '    direction: remote_to_local',
      'proxy:',
      '  default_timeout: 30',
      '  providers:',
      '    gpu1:',
      `      base_url: http://127.0.0.1:${localEnd}/v1`,
      '      api_key: ${GPU1_KEY}',
      '',
    ].join('\n'),
  });
  await daemon.waitState('llm', 'RUNNING');
});
afterAll(async () => {
  await daemon?.cleanup();
  await upstream?.close();
  await server?.stop();
});

const client = () => new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${daemon.apiPort}/v1`, maxRetries: 0 });

describe('/v1 on the daemon, through one of its tunnels', () => {
  it('answers a completion from the model server behind the tunnel, with the bare model name and the key added server-side', async () => {
    const before = upstream.received.length;
    const res = await client().chat.completions.create({ model: 'gpu1:llama3:8b', messages: [{ role: 'user', content: 'hi' }], temperature: 0.25 });
    expect(res.choices[0]?.message.content).toBe('hello from the mock');
    const got = upstream.received[before]!;
    expect(got.json?.model).toBe('llama3:8b');
    expect(got.json?.temperature).toBe(0.25);
    expect(got.headers.authorization).toBe('Bearer sk-upstream-secret-1234');
  });

  it('streams chunks through', async () => {
    const stream = await client().chat.completions.create({ model: 'gpu1:stream:3:20', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let chunks = 0;
    for await (const c of stream) if (c.choices[0]?.delta) chunks++;
    expect(chunks).toBe(3);
  });

  it('lists models as prefix:model', async () => {
    const list = await client().models.list();
    expect(list.data.map((m) => m.id).every((id) => id.startsWith('gpu1:'))).toBe(true);
    expect(list.data.length).toBeGreaterThan(0);
  });

  it('passes an upstream error through with its status and never shows the upstream key', async () => {
    const res = await fetch(`http://127.0.0.1:${daemon.apiPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpu1:echo-key:401', messages: [] }),
    });
    const text = await res.text();
    expect(res.status).toBe(401);
    expect(text).not.toContain('sk-upstream-secret-1234');
    expect(daemon.stderr()).not.toContain('sk-upstream-secret-1234');
  });

  it('says which tunnel is down when the provider is the local end of a stopped tunnel', async () => {
    const t = await daemon.waitState('llm', 'RUNNING');
    const stop = spawn(process.execPath, [CLI, '--socket', daemon.socketPath, 'stop-tunnel', t.hash.slice(0, 8)], { stdio: 'ignore' });
    await new Promise((r) => stop.once('exit', r));
    await daemon.waitState('llm', 'STOPPED');
    const err = await client()
      .chat.completions.create({ model: 'gpu1:x', messages: [{ role: 'user', content: 'hi' }] })
      .then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err?.status).toBe(502);
    expect(String(err?.message)).toMatch(/llm/);
    expect(String(err?.message)).toMatch(/STOPPED/);
  });
});

describe('tunnel-manager proxy', () => {
  it('serves /v1 alone from the same config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tm-proxy-'));
    const p = await port();
    writeFileSync(join(dir, 'config.yaml'), `proxy:\n  providers:\n    direct:\n      base_url: ${upstream.baseUrl}\n`);
    const child = spawn(process.execPath, [MAIN, 'proxy', '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${p}`], { stdio: 'ignore' });
    try {
      const c = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${p}/v1`, maxRetries: 3 });
      let res: Awaited<ReturnType<typeof c.chat.completions.create>> | null = null;
      for (let i = 0; i < 50 && res === null; i++) {
        res = await c.chat.completions.create({ model: 'direct:m', messages: [{ role: 'user', content: 'hi' }] }).catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return null;
        });
      }
      expect(res?.choices[0]?.message.content).toBe('hello from the mock');
      // The control API is not part of the proxy alone.
      expect((await fetch(`http://127.0.0.1:${p}/status`)).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
