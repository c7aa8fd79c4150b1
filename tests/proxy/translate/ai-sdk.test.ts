// The Vercel AI SDK across formats through the proxy: its Anthropic provider (Messages)
// against a vLLM-like chat server, and its openai.chat provider against an
// Anthropic-like Messages server; a tool loop and a stream each.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { MOCK_ANTHROPIC_KEY, startMockAnthropic, type MockAnthropic } from './mock-anthropic.js';
import { startMockVllm, type MockVllm } from './mock-vllm.js';

let vllm: MockVllm;
let claude: MockAnthropic;
let proxy: ProxyServer;
let url: string;

beforeAll(async () => {
  vllm = await startMockVllm();
  claude = await startMockAnthropic();
  const config = proxySchema.parse({ providers: { gpu: { base_url: vllm.baseUrl }, claude: { base_url: claude.baseUrl, api_key: MOCK_ANTHROPIC_KEY, format: 'anthropic' } } });
  proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => config } });
  url = `http://127.0.0.1:${proxy.port}`;
});
afterAll(async () => {
  await proxy?.close();
  await vllm?.close();
  await claude?.close();
});

const weather = tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }), execute: async ({ city }) => `sunny in ${city}` });

describe('the AI SDK across formats', () => {
  it('its Anthropic provider against the chat server: a tool loop, and a stream', async () => {
    const anthropic = createAnthropic({ baseURL: `${url}/v1`, apiKey: 'k' });
    const r = await generateText({ model: anthropic('gpu:m'), prompt: 'weather?', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe('the tool said: sunny in Paris');
    expect(r.steps[0]?.toolCalls[0]).toMatchObject({ toolName: 'weather', input: { city: 'Paris' } });
    expect(vllm.received.at(-1)!.url).toBe('/v1/chat/completions');
    const s = streamText({ model: anthropic('gpu:m'), prompt: 'hi', maxRetries: 0 });
    let text = '';
    for await (const t of s.textStream) text += t;
    expect(text).toBe('hello from vllm');
    expect((await s.usage).outputTokens).toBe(5);
  });

  it('its openai.chat provider against the Messages server: a tool loop, and a stream', async () => {
    const openai = createOpenAI({ baseURL: `${url}/v1`, apiKey: 'k' });
    const r = await generateText({ model: openai.chat('claude:c'), prompt: 'weather?', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe('the tool said: sunny in Paris');
    expect(claude.received.at(-1)!.url).toBe('/v1/messages');
    const s = streamText({ model: openai.chat('claude:c'), prompt: 'hi', maxRetries: 0 });
    let text = '';
    for await (const t of s.textStream) text += t;
    expect(text).toBe('hello from claude');
  });
});
