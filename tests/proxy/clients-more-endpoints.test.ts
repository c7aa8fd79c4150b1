// The JSON endpoints besides chat, responses, embeddings and completions that model
// servers serve: moderations, image generation and speech through the official
// `openai` client's own methods, vLLM's rerank and score through fetch, on both
// listeners; binary audio reaches the client byte for byte.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Listener } from './harness.js';
import { AUDIO } from './mock-formats.js';

const KEY = 'sk-proxy-more';

describe.each<Listener>(['proxy', 'daemon'])('more endpoints through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      (base) => ({ api_keys: ['${PROXY_KEY}'], providers: { gpu: { base_url: base, api_key: 'sk-upstream-more' } }, aliases: { 'tts-1': 'gpu:kokoro' } }),
      { env: { PROXY_KEY: KEY } },
      listener,
    );
  });
  afterAll(() => h.close());
  const openai = () => new OpenAI({ baseURL: `${h.url}/v1`, apiKey: KEY, maxRetries: 0 });
  const last = () => h.mock.received[h.mock.received.length - 1]!;
  const post = (path: string, body: unknown) =>
    fetch(`${h.url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('moderations.create', async () => {
    const r = await openai().moderations.create({ model: 'gpu:llama-guard', input: 'hello' });
    expect(r.results[0]!.flagged).toBe(false);
    expect(last().url).toBe('/v1/moderations');
    expect(last().json).toEqual({ model: 'llama-guard', input: 'hello' });
    expect(last().headers.authorization).toBe('Bearer sk-upstream-more');
  });

  it('images.generate', async () => {
    const r = await openai().images.generate({ model: 'gpu:flux', prompt: 'a tunnel' });
    expect(r.data?.[0]?.revised_prompt).toBe('a tunnel');
    expect(Buffer.from(r.data![0]!.b64_json!, 'base64')).toEqual(AUDIO.subarray(0, 64));
    expect(last().json).toMatchObject({ model: 'flux', prompt: 'a tunnel' });
  });

  it('audio.speech.create: binary audio byte for byte, through an alias', async () => {
    const r = await openai().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello' });
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await r.arrayBuffer())).toEqual(AUDIO);
    expect(last().url).toBe('/v1/audio/speech');
    expect(last().json).toMatchObject({ model: 'kokoro', voice: 'alloy', input: 'hello' });
  });

  it('audio.speech.create with stream_format "sse": the event stream, every event whole', async () => {
    const r = await openai().audio.speech.create({ model: 'gpu:kokoro', voice: 'alloy', input: 'hello', stream_format: 'sse' });
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    const events = (await r.text()).split('\n\n').filter(Boolean).map((e) => JSON.parse(e.slice('data: '.length)));
    expect(events.map((e) => e.type)).toEqual(['speech.audio.delta', 'speech.audio.delta', 'speech.audio.done']);
    expect(Buffer.concat(events.slice(0, 2).map((e) => Buffer.from(e.audio, 'base64')))).toEqual(AUDIO);
  });

  it('rerank (vLLM\'s and Jina\'s shape)', async () => {
    const r = await post('/rerank', { model: 'gpu:bge-reranker', query: 'ssh', documents: ['tunnel', 'boat'] });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBeTruthy();
    expect(((await r.json()) as { results: unknown[] }).results).toEqual([
      { index: 0, document: { text: 'tunnel' }, relevance_score: 1 },
      { index: 1, document: { text: 'boat' }, relevance_score: 0.5 },
    ]);
    expect(last().url).toBe('/v1/rerank');
    expect(last().json?.model).toBe('bge-reranker');
  });

  it('score', async () => {
    const r = await post('/score', { model: 'gpu:bge-reranker', text_1: 'ssh', text_2: 'tunnel' });
    expect(((await r.json()) as { data: { score: number }[] }).data[0]!.score).toBe(0.75);
    expect(last().url).toBe('/v1/score');
  });

  it('refuses a multipart upload with a 404 that lists what is served', async () => {
    const form = new FormData();
    form.set('model', 'gpu:whisper');
    form.set('file', new Blob([AUDIO], { type: 'audio/mpeg' }), 'a.mp3');
    const r = await fetch(`${h.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form });
    expect(r.status).toBe(404);
    const message = ((await r.json()) as { error: { message: string } }).error.message;
    expect(message).toContain('no route POST /v1/audio/transcriptions');
    expect(message).toContain('/v1/audio/speech');
  });

  it('counts each endpoint apart on /metrics', async () => {
    const text = await (await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    for (const endpoint of ['/moderations', '/images/generations', '/audio/speech', '/rerank', '/score']) {
      expect(text).toMatch(new RegExp(`proxy_requests_total\\{[^}]*endpoint="${endpoint.replace('/', '\\/')}"[^}]*status="200"`));
    }
  });
});
