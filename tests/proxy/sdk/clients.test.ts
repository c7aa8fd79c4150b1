// Every endpoint through the proxy with the clients people use, unchanged: the
// official `openai` client, the Vercel AI SDK (whose default `openai('…')` model
// speaks the Responses API, and whose Anthropic provider speaks /v1/messages) and the
// Anthropic SDK, against mock providers that answer
// as the real APIs do, on both listeners (`tunnel-manager proxy`'s and the daemon's /v1).
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-clients';

describe.each<Listener>(['proxy', 'daemon'])('clients through the %s listener', (listener) => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(
      (base) => ({
        api_keys: ['${PROXY_KEY}'],
        providers: {
          mock: { base_url: base, api_key: 'sk-upstream-openai' },
          claude: { base_url: base, api_key: 'sk-upstream-anthropic', format: 'anthropic' },
        },
        aliases: { 'gpt-4o-mini': 'mock:llama3:8b' },
      }),
      { env: { PROXY_KEY: KEY } },
      listener,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const openai = () => new OpenAI({ baseURL: `${h.url}/v1`, apiKey: KEY, maxRetries: 0 });
  const last = () => h.mock.received[h.mock.received.length - 1]!;

  describe('the official openai client', () => {
    it('chat.completions.create, plain and streamed, through an alias', async () => {
      const reply = await openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      expect(reply.choices[0]?.message.content).toBe('hello from the mock');
      expect(last().json?.model).toBe('llama3:8b');
      const stream = await openai().chat.completions.create({ model: 'mock:llama3:8b', messages: [{ role: 'user', content: 'hi' }], stream: true });
      let text = '';
      for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
      expect(text).toBe('hello from the mock');
    });

    it('responses.create, plain and streamed', async () => {
      const r = await openai().responses.create({ model: 'mock:llama3:8b', input: 'hi' });
      expect(r.output_text).toBe('hello from the mock');
      expect(last().url).toBe('/v1/responses');
      expect(last().json?.model).toBe('llama3:8b');
      expect(last().headers.authorization).toBe('Bearer sk-upstream-openai');
      const stream = await openai().responses.create({ model: 'mock:llama3:8b', input: 'hi', stream: true });
      const types: string[] = [];
      let text = '';
      for await (const e of stream) {
        types.push(e.type);
        if (e.type === 'response.output_text.delta') text += e.delta;
      }
      expect(text).toBe('hello from the mock');
      expect(types.at(-1)).toBe('response.completed');
    });

    it('embeddings.create (base64 by default, decoded by the client)', async () => {
      const r = await openai().embeddings.create({ model: 'mock:nomic-embed-text', input: ['a', 'b'] });
      expect(r.data.map((d) => d.embedding)).toEqual([[0.5, -0.25, 0.125], [0.5, -0.25, 0.125]]);
      expect(last().url).toBe('/v1/embeddings');
      expect(last().json?.model).toBe('nomic-embed-text');
    });

    it('completions.create, plain and streamed', async () => {
      const r = await openai().completions.create({ model: 'mock:llama3:8b', prompt: 'say' });
      expect(r.choices[0]?.text).toBe('hello from the mock');
      expect(last().url).toBe('/v1/completions');
      const stream = await openai().completions.create({ model: 'mock:llama3:8b', prompt: 'say', stream: true });
      let text = '';
      for await (const part of stream) text += part.choices[0]?.text ?? '';
      expect(text).toBe('hello from the mock');
    });

    it('models.retrieve with colons and slashes in the id, and an alias', async () => {
      h.mock.models = [{ id: 'meta-llama/Llama-3.1-8B:q4', owned_by: 'mock' }];
      const m = await openai().models.retrieve('mock:meta-llama/Llama-3.1-8B:q4');
      expect(m.id).toBe('mock:meta-llama/Llama-3.1-8B:q4');
      expect((await openai().models.retrieve('gpt-4o-mini')).id).toBe('gpt-4o-mini');
      const missing = await openai().models.retrieve('mock:nope').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('chat to an Anthropic-only provider is translated; an endpoint without a translation is a 400 naming the formats', async () => {
      const chat = await openai().chat.completions.create({ model: 'claude:claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }] });
      expect(chat.choices[0]?.message.content).toBe('hello from the mock');
      expect(last().url).toBe('/v1/messages');
      expect(last().headers['x-api-key']).toBe('sk-upstream-anthropic');
      const e = await openai().embeddings.create({ model: 'claude:claude-sonnet-4', input: 'hi' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      expect((e as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/provider "claude" takes the anthropic format, and \/v1\/embeddings/);
      expect((e as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unsupported_format');
    });
  });

  describe('the Vercel AI SDK', () => {
    const provider = () => createOpenAI({ baseURL: `${h.url}/v1`, apiKey: KEY });

    it("generateText and streamText with openai('…') (the Responses API)", async () => {
      const r = await generateText({ model: provider()('mock:llama3:8b'), prompt: 'hi', maxRetries: 0 });
      expect(r.text).toBe('hello from the mock');
      expect(r.usage.inputTokens).toBe(9);
      expect(last().url).toBe('/v1/responses');
      const s = streamText({ model: provider()('mock:llama3:8b'), prompt: 'hi', maxRetries: 0 });
      let text = '';
      for await (const t of s.textStream) text += t;
      expect(text).toBe('hello from the mock');
      expect((await s.usage).outputTokens).toBe(4);
    });

    it('generateText and streamText with openai.chat(…)', async () => {
      const r = await generateText({ model: provider().chat('gpt-4o-mini'), prompt: 'hi', maxRetries: 0 });
      expect(r.text).toBe('hello from the mock');
      expect(last().url).toBe('/v1/chat/completions');
      const s = streamText({ model: provider().chat('mock:llama3:8b'), prompt: 'hi', maxRetries: 0 });
      let text = '';
      for await (const t of s.textStream) text += t;
      expect(text).toBe('hello from the mock');
      expect((await s.usage).inputTokens).toBe(7);
    });
  });

  describe("the Vercel AI SDK's Anthropic provider", () => {
    const provider = () => createAnthropic({ baseURL: `${h.url}/v1`, apiKey: KEY });

    it('generateText and streamText with anthropic(…): /v1/messages, x-api-key to the proxy, the provider key upstream', async () => {
      const r = await generateText({ model: provider()('claude:claude-sonnet-4'), prompt: 'hi', maxRetries: 0 });
      expect(r.text).toBe('hello from the mock');
      expect(r.finishReason).toBe('stop');
      expect([last().url, last().json?.model, last().headers['x-api-key']]).toEqual(['/v1/messages', 'claude-sonnet-4', 'sk-upstream-anthropic']);
      const s = streamText({ model: provider()('claude:claude-sonnet-4'), prompt: 'hi', maxRetries: 0 });
      let text = '';
      for await (const t of s.textStream) text += t;
      expect(text).toBe('hello from the mock');
      expect((await s.usage).outputTokens).toBeGreaterThan(0);
    });

    it('an unknown model is an APICallError with the proxy\'s message, in Anthropic\'s shape', async () => {
      const e = await generateText({ model: provider()('nope:x'), prompt: 'hi', maxRetries: 0 }).catch((x: unknown) => x);
      expect(APICallError.isInstance(e)).toBe(true);
      expect((e as APICallError).statusCode).toBe(404);
      expect((e as APICallError).message).toContain('no provider "nope"');
    });
  });

  describe('the Anthropic SDK', () => {
    const anthropic = (apiKey = KEY) => new Anthropic({ baseURL: h.url, apiKey, maxRetries: 0 });

    it('messages.create, with x-api-key to the proxy and the provider key as x-api-key upstream', async () => {
      const m = await anthropic().messages.create({ model: 'claude:claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
      expect(m.content[0]).toEqual({ type: 'text', text: 'hello from the mock' });
      const got = last();
      expect(got.url).toBe('/v1/messages');
      expect(got.json?.model).toBe('claude-sonnet-4');
      expect(got.headers['x-api-key']).toBe('sk-upstream-anthropic');
      expect(got.headers.authorization).toBeUndefined();
      // The client's own anthropic-version is passed on, not replaced.
      expect(got.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    });

    it('an Anthropic provider\'s models are listed, asked for in Anthropic\'s way', async () => {
      const ids: string[] = [];
      for await (const m of openai().models.list()) ids.push(m.id);
      // The mock's list, under each prefix.
      const mine = h.mock.models === 'hang' ? [] : h.mock.models.map((m) => m.id);
      expect(ids).toEqual([...mine.map((id) => `mock:${id}`), ...mine.map((id) => `claude:${id}`), 'gpt-4o-mini']);
      const asked = h.mock.received.filter((r) => r.method === 'GET' && r.headers['x-api-key'] === 'sk-upstream-anthropic');
      expect(asked.map((r) => r.url)).toEqual(['/v1/models?limit=1000']);
      expect(asked[0]!.headers['anthropic-version']).toBe('2023-06-01');
      expect(asked[0]!.headers.authorization).toBeUndefined();
    });

    it('messages.countTokens', async () => {
      const r = await anthropic().messages.countTokens({ model: 'claude:claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }] });
      expect(r.input_tokens).toBe(5);
      expect(last().url).toBe('/v1/messages/count_tokens');
      expect(last().json?.model).toBe('claude-sonnet-4');
    });

    it('messages.stream', async () => {
      const stream = anthropic().messages.stream({ model: 'claude:claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
      let text = '';
      stream.on('text', (t) => (text += t));
      const final = await stream.finalMessage();
      expect(text).toBe('hello from the mock');
      expect(final.usage.output_tokens).toBe(6);
    });

    it('errors come in Anthropic\'s shape (a wrong key); an OpenAI-only provider gets the request translated', async () => {
      const denied = await anthropic('wrong').messages.create({ model: 'claude:x', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((denied as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      const translated = await anthropic().messages.create({ model: 'mock:llama3:8b', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
      expect(translated.content).toEqual([{ type: 'text', text: 'hello from the mock' }]);
      expect(last().url).toBe('/v1/chat/completions');
      expect(last().headers.authorization).toBe('Bearer sk-upstream-openai');
    });
  });
});
