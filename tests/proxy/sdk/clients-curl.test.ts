// curl through the proxy, on both listeners, as the docs' examples call it: every
// endpoint, `-N` printing each event as it arrives, `--compressed`, `--max-time`, and
// requests without `Host` (HTTP/1.0 is served, HTTP/1.1 gets the JSON error).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-curl';

interface Curl {
  code: number;
  /** The response head (`-D -` writes it before the body). */
  head: string;
  body: string;
  json: any;
}

describe.each<Listener>(['proxy', 'daemon'])('curl through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      (base) => ({
        default_timeout: 30,
        api_keys: ['${PROXY_KEY}'],
        providers: {
          mock: { base_url: base },
          strict: { base_url: base, timeout: 0.3 },
          claude: { base_url: base, format: 'anthropic' },
        },
      }),
      { env: { PROXY_KEY: KEY } },
      listener,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const curl = async (path: string, args: string[] = []): Promise<Curl> => {
    const r = await promisify(execFile)('curl', ['-sS', '-D', '-', `${h.url}${path}`, ...args]).then(
      (x) => ({ code: 0, stdout: x.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
    const cut = r.stdout.indexOf('\r\n\r\n');
    const head = cut < 0 ? r.stdout : r.stdout.slice(0, cut);
    const body = cut < 0 ? '' : r.stdout.slice(cut + 4);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = null;
    }
    return { code: r.code, head: head.toLowerCase(), body, json };
  };
  const post = (path: string, body: unknown, headers: string[] = ['-H', `Authorization: Bearer ${KEY}`]) =>
    curl(path, [...headers, '-H', 'Content-Type: application/json', '-d', JSON.stringify(body)]);
  const messages = [{ role: 'user', content: 'hi' }];
  const last = () => h.mock.received[h.mock.received.length - 1]!;

  it('every endpoint answers as the provider did', async () => {
    expect((await post('/v1/chat/completions', { model: 'mock:llama3:8b', messages })).json.choices[0].message.content).toBe('hello from the mock');
    expect((await post('/v1/responses', { model: 'mock:llama3:8b', input: 'hi' })).json.output[0].content[0].text).toBe('hello from the mock');
    expect((await post('/v1/embeddings', { model: 'mock:nomic-embed-text', input: 'hi', encoding_format: 'float' })).json.data[0].embedding).toEqual([0.5, -0.25, 0.125]);
    expect((await post('/v1/completions', { model: 'mock:llama3:8b', prompt: 'say' })).json.choices[0].text).toBe('hello from the mock');
    const m = await post('/v1/messages', { model: 'claude:claude-sonnet-4', max_tokens: 64, messages }, ['-H', `x-api-key: ${KEY}`, '-H', 'anthropic-version: 2023-06-01']);
    expect(m.json.content).toEqual([{ type: 'text', text: 'hello from the mock' }]);
    expect(last().headers['anthropic-version']).toBe('2023-06-01');
    const list = await curl('/v1/models', ['-H', `Authorization: Bearer ${KEY}`]);
    expect(list.json.data.map((x: { id: string }) => x.id)).toContain('mock:llama3:8b');
    expect((await curl('/v1/models/mock:llama3:8b', ['-H', `Authorization: Bearer ${KEY}`])).json.id).toBe('mock:llama3:8b');
  });

  it('-F uploads an audio file for transcription, which reaches the provider byte for byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tm-curl-upload-'));
    const audio = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    writeFileSync(join(dir, 'clip.mp3'), audio);
    try {
      const r = await curl('/v1/audio/transcriptions', ['-H', `Authorization: Bearer ${KEY}`, '-F', 'model=mock:whisper', '-F', 'response_format=text', '-F', `file=@${join(dir, 'clip.mp3')};type=audio/mpeg`]);
      expect(r.head).toMatch(/^http\/1\.1 200/);
      expect(r.body).toBe('hello from the mock\n');
      const file = last().form!.get('file') as File;
      expect([last().form!.get('model'), file.name, file.type]).toEqual(['whisper', 'clip.mp3', 'audio/mpeg']);
      expect(Buffer.from(await file.arrayBuffer())).toEqual(audio);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('-N prints each event as it arrives: the first is out while the provider still holds the second', async () => {
    const child = spawn('curl', ['-sSN', `${h.url}/v1/chat/completions`, '-H', `Authorization: Bearer ${KEY}`, '-H', 'Content-Type: application/json', '-d', JSON.stringify({ model: 'mock:gated-stream', messages, stream: true })]);
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const first = new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        if (out.includes('first ')) resolve();
      }),
    );
    // Not released until curl has printed the first event: a buffering hop would hang here.
    await first;
    expect(out).not.toContain('second');
    h.mock.release();
    expect(await exited).toBe(0);
    expect(out).toMatch(/"content":"second".*\n\ndata: \[DONE\]\n\n$/s);
  });

  it("--compressed against a provider that compresses: curl gets the plain body", async () => {
    const r = await post('/v1/chat/completions', { model: 'mock:gz:br:json', messages }, ['-H', `Authorization: Bearer ${KEY}`, '--compressed']);
    expect(r.code).toBe(0);
    expect(r.head).not.toContain('content-encoding');
    expect(r.json.model).toBe('gz:br:json');
  });

  it("the proxy's 504 and a malformed body are JSON errors", async () => {
    const slow = await post('/v1/chat/completions', { model: 'strict:hang', messages });
    expect(slow.head).toMatch(/^http\/1\.1 504/);
    expect(slow.head).toContain('x-should-retry: false');
    expect(slow.json.error.code).toBe('upstream_timeout');
    const bad = await curl('/v1/chat/completions', ['-H', `Authorization: Bearer ${KEY}`, '-H', 'Content-Type: application/json', '-d', '{"model": ']);
    expect(bad.head).toMatch(/^http\/1\.1 400/);
    expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('--max-time ends curl\'s wait (exit 28); the proxy aborts the provider and logs the client\'s close', async () => {
    const at = h.mock.received.length;
    const r = await post('/v1/chat/completions', { model: 'mock:hang', messages }, ['-H', `Authorization: Bearer ${KEY}`, '--max-time', '1']);
    expect(r.code).toBe(28);
    expect(await (await h.mock.request(at)).ended).toBe('client_closed');
    await eventually(() => h.logs.some((l) => l.event === 'proxy_client_closed'), 'client close logged');
  });

  it('-I (HEAD) gets the head of the proxy\'s own answer on the models and on an unknown path', async () => {
    for (const [path, status] of [['/v1/models', 200], ['/v1/models/mock:llama3:8b', 200], ['/v1/models/mock:nope', 404], ['/v1/files', 404]] as const) {
      const r = await curl(path, ['-I', '-o', '/dev/null', '-H', `Authorization: Bearer ${KEY}`]);
      expect(r.head, path).toMatch(new RegExp(`^http/1\\.1 ${status}`));
      expect(r.head, path).toContain('content-type: application/json');
      expect(r.head, path).toMatch(/\nx-request-id: \S+/);
      expect(r.head, path).not.toContain('x-hono');
      expect(r.body, path).toBe('');
    }
  });

  it('HTTP/1.0 without Host is served; HTTP/1.1 without Host is a JSON 400', async () => {
    const old = await curl('/v1/models', ['-0', '-H', 'Host:', '-H', `Authorization: Bearer ${KEY}`]);
    expect(old.head).toMatch(/^http\/1\.[01] 200/);
    expect(old.json.object).toBe('list');
    const bare = await curl('/v1/models', ['-H', 'Host:', '-H', `Authorization: Bearer ${KEY}`]);
    expect(bare.head).toMatch(/^http\/1\.1 400/);
    expect(bare.json).toEqual({ error: { message: 'an HTTP/1.1 request needs a Host header', type: 'invalid_request_error', param: null, code: 'bad_request' } });
  });
});
