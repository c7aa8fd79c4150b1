// Python's `httpx` and `requests` through the proxy, on both listeners, as a user's
// script calls them (tests/fixtures/python/proxy_client.py): plain and streamed chat
// read line by line (every event whole JSON), embeddings, Anthropic's /v1/messages with
// x-api-key, /v1/models, a malformed body, and a provider that compresses its answer
// to clients that accept gzip (both send `Accept-Encoding: gzip, deflate` by default).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../../e2e/daemon-harness.js';
import { startHarness, type Harness, type Listener } from '../harness.js';

// Debian's python3-httpx and python3-requests (scripts/test installs them) are for the
// system interpreter, which a pyenv or venv python3 earlier on PATH would not see.
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const SCRIPT = join(REPO, 'tests/fixtures/python/proxy_client.py');
const KEY = 'sk-proxy-python';
const UPSTREAM_KEY = 'sk-upstream-python';

interface Outcome {
  status: number;
  sent: Record<string, string>;
  headers: Record<string, string>;
  json?: any;
  events?: any[];
  broken?: string[];
  done?: boolean;
}

describe.each<Listener>(['proxy', 'daemon'])('Python clients through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      (base) => ({
        api_keys: ['${PROXY_KEY}'],
        providers: {
          mock: { base_url: base, api_key: '${UPSTREAM_KEY}' },
          claude: { base_url: base, api_key: '${UPSTREAM_KEY}', format: 'anthropic' },
        },
      }),
      { env: { PROXY_KEY: KEY, UPSTREAM_KEY } },
      listener,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const last = () => h.mock.received[h.mock.received.length - 1]!;

  describe.each(['httpx', 'requests'])('%s', (library) => {
    const run = async (kind: string, model?: string): Promise<Outcome> => {
      const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, library, kind, h.url, KEY, ...(model === undefined ? [] : [model])]);
      return JSON.parse(stdout) as Outcome;
    };

    it('chat, not streamed', async () => {
      const r = await run('chat');
      expect(r.status).toBe(200);
      expect(r.json.choices[0].message.content).toBe('hello from the mock');
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(last().json?.model).toBe('llama3:8b');
      expect(last().headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    });

    it('a streamed chat read line by line: every event is whole JSON, then [DONE]', async () => {
      const r = await run('stream');
      expect(r.status).toBe(200);
      expect(r.broken).toEqual([]);
      expect(r.events!.map((e) => e.choices[0]?.delta?.content ?? '').join('')).toBe('hello from the mock');
      expect(r.done).toBe(true);
    });

    it('a stream written a few bytes at a time with CRLF line ends arrives as whole events', async () => {
      const r = await run('stream', 'mock:split-events:crlf');
      expect(r.broken).toEqual([]);
      expect(r.events!.map((e) => e.choices[0].delta.content)).toEqual(['one', 'two', 'three']);
      expect(r.done).toBe(true);
    });

    it('a stream the provider cuts mid-event ends with the error event, never half an event, and no [DONE]', async () => {
      const r = await run('stream', 'mock:cut-event');
      expect(r.broken).toEqual([]);
      expect(r.events!.map((e) => e.choices?.[0]?.delta?.content ?? e.error.code)).toEqual(['whole ', 'upstream_disconnected']);
      expect(r.done).toBe(false);
    });

    it('embeddings', async () => {
      const r = await run('embeddings', 'mock:nomic-embed-text');
      expect(r.status).toBe(200);
      expect(r.json.data.map((d: { embedding: number[] }) => d.embedding)).toEqual([[0.5, -0.25, 0.125], [0.5, -0.25, 0.125]]);
      expect(last().url).toBe('/v1/embeddings');
      expect(last().json?.model).toBe('nomic-embed-text');
    });

    it('/v1/messages with x-api-key, plain and streamed', async () => {
      const r = await run('messages', 'claude:claude-sonnet-4');
      expect(r.status).toBe(200);
      expect(r.json.content).toEqual([{ type: 'text', text: 'hello from the mock' }]);
      expect(last().headers['x-api-key']).toBe(UPSTREAM_KEY);
      expect(last().headers['anthropic-version']).toBe('2023-06-01');
      const s = await run('messages-stream', 'claude:claude-sonnet-4');
      expect(s.broken).toEqual([]);
      expect(s.events!.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('')).toBe('hello from the mock');
      expect(s.events!.at(-1)).toEqual({ type: 'message_stop' });
    });

    it('an audio upload (files=): the file reaches the provider byte for byte, with the bare model', async () => {
      const r = await run('transcription', 'mock:whisper-large-v3');
      expect(r.status).toBe(200);
      expect(r.json.text).toBe('hello from the mock');
      const form = last().form!;
      expect(form.get('model')).toBe('whisper-large-v3');
      expect(form.get('language')).toBe('en');
      const file = form.get('file') as File;
      expect([file.name, file.type]).toEqual(['clip.wav', 'audio/wav']);
      expect(Buffer.from(await file.arrayBuffer())).toEqual(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    });

    it('/v1/models', async () => {
      const r = await run('models');
      expect(r.status).toBe(200);
      expect(r.json.object).toBe('list');
      expect(r.json.data.map((m: { id: string }) => m.id)).toEqual(['mock:llama3:8b', 'mock:qwen2', 'claude:llama3:8b', 'claude:qwen2']);
    });

    it('a malformed body is a JSON 400', async () => {
      const r = await run('malformed');
      expect(r.status).toBe(400);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    });

    it('accepting gzip from a provider that compresses: a plain body, plain streamed events', async () => {
      const r = await run('chat', 'mock:gz:gzip:json');
      expect(r.sent['accept-encoding']).toMatch(/gzip/);
      expect(last().headers['accept-encoding']).toBe('identity');
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.json.choices[0].message.content).toBe('hello from the mock');
      const s = await run('stream', 'mock:gz:gzip:stream');
      expect(s.headers['content-encoding']).toBeUndefined();
      expect(s.broken).toEqual([]);
      expect(s.events!.map((e) => e.choices[0].delta.content)).toEqual(['one ', 'two ', 'three']);
      expect(s.done).toBe(true);
    });
  });
});
