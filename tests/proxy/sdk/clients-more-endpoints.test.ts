// The endpoints besides chat, responses, embeddings and completions that model
// servers serve: moderations, image generation, speech and the audio uploads of
// transcription and translation through the official `openai` client's own methods
// and the Vercel AI SDK's (with its embeddings), vLLM's rerank and score through
// fetch, on both listeners; binary audio reaches the
// client byte for byte, and an upload's file reaches the provider byte for byte.
import { createOpenAI } from '@ai-sdk/openai';
import { embed, embedMany, experimental_generateSpeech as generateSpeech, experimental_transcribe as transcribe, generateImage } from 'ai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startHarness, type Harness, type Listener } from '../harness.js';
import { AUDIO } from '../mock-formats.js';
import { deadPort } from '../mock-upstream.js';

const KEY = 'sk-proxy-more';

describe.each<Listener>(['proxy', 'daemon'])('more endpoints through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    const dead = await deadPort();
    h = await startHarness(
      (base) => ({
        api_keys: ['${PROXY_KEY}'],
        providers: { gpu: { base_url: base, api_key: 'sk-upstream-more' }, down: { base_url: `http://127.0.0.1:${dead}/v1` } },
        aliases: { 'tts-1': 'gpu:kokoro', 'whisper-1': 'gpu:whisper', asr: ['down:whisper-large', 'gpu:whisper-small'] },
      }),
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

  describe('audio uploads (multipart)', () => {
    const audio = () => toFile(AUDIO, 'clip.mp3', { type: 'audio/mpeg' });
    /** What the provider got: the form as its framework reads it. */
    const upload = async () => {
      const form = last().form!;
      const file = form.get('file') as File;
      return { fields: Object.fromEntries([...form].filter(([, v]) => typeof v === 'string')), file, bytes: Buffer.from(await file.arrayBuffer()) };
    };

    it('audio.transcriptions.create: the file and every field reach the provider, with the bare model', async () => {
      const r = await openai().audio.transcriptions.create({ model: 'gpu:whisper-large-v3', file: await audio(), language: 'en', temperature: 0.2 });
      expect(r.text).toBe('hello from the mock');
      expect(last().url).toBe('/v1/audio/transcriptions');
      expect(last().headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(last().headers.authorization).toBe('Bearer sk-upstream-more');
      const got = await upload();
      expect(got.fields).toEqual({ model: 'whisper-large-v3', language: 'en', temperature: '0.2' });
      expect(got.file.name).toBe('clip.mp3');
      expect(got.file.type).toBe('audio/mpeg');
      expect(got.bytes).toEqual(AUDIO);
    });

    it('the provider gets the client\'s bytes with only the model replaced', async () => {
      const form = new FormData();
      form.append('model', 'gpu:whisper-large-v3');
      form.append('file', new Blob([AUDIO], { type: 'audio/mpeg' }), 'clip.mp3');
      const encoded = new Response(form);
      const bytes = Buffer.from(await encoded.arrayBuffer());
      const type = encoded.headers.get('content-type')!;
      const r = await call(h.url, { path: '/v1/audio/transcriptions', body: bytes, headers: { 'content-type': type, authorization: `Bearer ${KEY}` } });
      expect(r.status).toBe(200);
      expect(last().headers['content-type']).toBe(type);
      expect(last().bytes.equals(Buffer.from(bytes.toString('latin1').replace('gpu:whisper-large-v3', 'whisper-large-v3'), 'latin1'))).toBe(true);
    });

    it('every response_format, and a streamed transcription', async () => {
      const client = openai();
      expect(await client.audio.transcriptions.create({ model: 'gpu:whisper', file: await audio(), response_format: 'text' })).toBe('hello from the mock\n');
      const verbose = await client.audio.transcriptions.create({ model: 'gpu:whisper', file: await audio(), response_format: 'verbose_json' });
      expect(verbose.segments?.[0]?.text).toBe('hello from the mock');
      const stream = await client.audio.transcriptions.create({ model: 'gpu:gpt-4o-transcribe', file: await audio(), stream: true });
      const types: string[] = [];
      for await (const e of stream) types.push(e.type);
      expect(types).toEqual(['transcript.text.delta', 'transcript.text.delta', 'transcript.text.delta', 'transcript.text.delta', 'transcript.text.done']);
    });

    it('audio.translations.create through an alias', async () => {
      const r = await openai().audio.translations.create({ model: 'whisper-1', file: await audio() });
      expect(r.text).toBe('hello from the mock');
      expect(last().url).toBe('/v1/audio/translations');
      expect((await upload()).fields.model).toBe('whisper');
    });

    it('falls back with the form: the second target gets the file and its own model name', async () => {
      const r = await openai().audio.transcriptions.create({ model: 'asr', file: await audio() });
      expect(r.text).toBe('hello from the mock');
      const got = await upload();
      expect(got.fields.model).toBe('whisper-small');
      expect(got.bytes).toEqual(AUDIO);
    });

    it('refuses what is not an upload, a form without a model, and an upload over 25 MiB, each saying why', async () => {
      const at = h.mock.received.length;
      const json = await post('/audio/transcriptions', { model: 'gpu:whisper', file: 'x' });
      expect(json.status).toBe(400);
      expect(((await json.json()) as { error: { message: string } }).error.message).toMatch(/^this route takes a multipart\/form-data body .* found content-type "application\/json"$/);
      const noModel = new FormData();
      noModel.set('file', new Blob([AUDIO]), 'a.mp3');
      const r = await fetch(`${h.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: noModel });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: unknown }).error).toMatchObject({ param: 'model', message: expect.stringContaining('missing required form field "model"') });
      const big = new FormData();
      big.set('model', 'gpu:whisper');
      big.set('file', new Blob([Buffer.alloc(25 * 1024 * 1024 + 1)]), 'big.wav');
      const tooBig = await fetch(`${h.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: big });
      expect(tooBig.status).toBe(413);
      expect(((await tooBig.json()) as { error: { code: string } }).error.code).toBe('request_too_large');
      expect(h.mock.received.length).toBe(at);
    });

    it('refuses other multipart routes with a 404 that lists what is served', async () => {
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new Blob(['{}']), 'a.jsonl');
      const r = await fetch(`${h.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form });
      expect(r.status).toBe(404);
      const message = ((await r.json()) as { error: { message: string } }).error.message;
      expect(message).toContain('no route POST /v1/files');
      expect(message).toContain('/v1/audio/transcriptions');
    });
  });

  describe('the Vercel AI SDK', () => {
    const provider = () => createOpenAI({ baseURL: `${h.url}/v1`, apiKey: KEY });

    it('embed and embedMany', async () => {
      const one = await embed({ model: provider().embedding('gpu:nomic-embed-text'), value: 'hi', maxRetries: 0 });
      expect(one.embedding).toEqual([0.5, -0.25, 0.125]);
      expect(last().url).toBe('/v1/embeddings');
      expect(last().json?.model).toBe('nomic-embed-text');
      const many = await embedMany({ model: provider().embedding('gpu:nomic-embed-text'), values: ['a', 'b'], maxRetries: 0 });
      expect(many.embeddings).toHaveLength(2);
    });

    it('generateImage', async () => {
      const r = await generateImage({ model: provider().image('gpu:flux'), prompt: 'a tunnel', maxRetries: 0 });
      expect(Buffer.from(r.image.uint8Array)).toEqual(AUDIO.subarray(0, 64));
      expect(last().url).toBe('/v1/images/generations');
      expect(last().json?.model).toBe('flux');
    });

    it('generateSpeech: the audio byte for byte', async () => {
      const r = await generateSpeech({ model: provider().speech('tts-1'), text: 'hello', voice: 'alloy', maxRetries: 0 });
      expect(Buffer.from(r.audio.uint8Array)).toEqual(AUDIO);
      expect(last().json).toMatchObject({ model: 'kokoro', input: 'hello', voice: 'alloy' });
    });

    it('transcribe: the upload reaches the provider, the text comes back', async () => {
      const r = await transcribe({ model: provider().transcription('gpu:whisper-large-v3'), audio: AUDIO, maxRetries: 0 });
      expect(r.text).toBe('hello from the mock');
      expect(last().url).toBe('/v1/audio/transcriptions');
      expect(last().form?.get('model')).toBe('whisper-large-v3');
      expect(Buffer.from(await (last().form?.get('file') as File).arrayBuffer())).toEqual(AUDIO);
    });
  });

  it('counts each endpoint apart on /metrics', async () => {
    const text = await (await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    for (const endpoint of ['/moderations', '/images/generations', '/audio/speech', '/rerank', '/score', '/audio/transcriptions', '/audio/translations']) {
      expect(text).toMatch(new RegExp(`proxy_requests_total\\{[^}]*endpoint="${endpoint.replace('/', '\\/')}"[^}]*status="200"`));
    }
  });
});
