// The Responses API (the default of current OpenAI SDKs and of the AI SDK's openai
// provider) against a chat-only server (`responses: chat`) through the proxy.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { call } from '../harness.js';
import { startMockVllm, type MockVllm } from './mock-vllm.js';

let mock: MockVllm;
let proxy: ProxyServer;
let url: string;

beforeAll(async () => {
  mock = await startMockVllm();
  const config = proxySchema.parse({ providers: { gpu: { base_url: mock.baseUrl, responses: 'chat' }, plain: { base_url: mock.baseUrl } } });
  proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => config } });
  url = `http://127.0.0.1:${proxy.port}`;
});
afterAll(async () => {
  await proxy?.close();
  await mock?.close();
});

const client = () => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-client', maxRetries: 0 });
const last = () => mock.received[mock.received.length - 1]!;
const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];

describe('responses.create against a chat-only provider', () => {
  it('plain: instructions and input become chat messages; output_text and usage come back', async () => {
    const r = await client().responses.create({ model: 'gpu:qwen3', instructions: 'be brief', input: 'hi', max_output_tokens: 50, temperature: 0.3 });
    expect(r.output_text).toBe('hello from vllm');
    expect(r.status).toBe('completed');
    expect(r.usage).toMatchObject({ input_tokens: 21, output_tokens: 5, input_tokens_details: { cached_tokens: 16 } });
    expect(last().url).toBe('/v1/chat/completions');
    expect(last().json).toEqual({ model: 'qwen3', max_tokens: 50, temperature: 0.3, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] });
  });

  it('the tool loop over two turns: function_call out, function_call_output in', async () => {
    const first = await client().responses.create({ model: 'gpu:m', input: [{ role: 'user', content: 'weather?' }], tools });
    const fc = first.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')!;
    expect(fc).toMatchObject({ name: 'weather', arguments: '{"city":"Paris"}' });
    const second = await client().responses.create({
      model: 'gpu:m',
      input: [{ role: 'user', content: 'weather?' }, fc, { type: 'function_call_output', call_id: fc.call_id, output: 'rain' }],
      tools,
    });
    expect(second.output_text).toBe('the tool said: rain');
    expect(last().json.messages).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: fc.call_id, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: fc.call_id, content: 'rain' },
    ]);
  });

  it('streamed: the events the openai client reads, text and a function call', async () => {
    const stream = await client().responses.create({ model: 'gpu:m', input: 'hi', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    expect(text).toBe('hello from vllm');
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.at(-1)).toBe('response.completed');
    const final = await client().responses.stream({ model: 'gpu:m', input: 'weather?', tools }).finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['function_call']);
    expect(final.usage?.output_tokens).toBe(5);
  });

  it('reasoning_content becomes a reasoning item, plain and streamed', async () => {
    const r = await client().responses.create({ model: 'gpu:reasoning', input: 'hi' });
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(r.output[0]).toMatchObject({ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'the user greets me' }] });
    expect(r.output_text).toBe('hello from vllm');
    const final = await client().responses.stream({ model: 'gpu:reasoning', input: 'hi' }).finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(final.output[0]).toMatchObject({ content: [{ type: 'reasoning_text', text: 'the user greets me' }] });
    expect(final.output_text).toBe('hello from vllm');
  });

  it('a cut stream ends with an error event the client raises; previous_response_id is refused by name', async () => {
    const stream = await client().responses.create({ model: 'gpu:cut', input: 'hi', stream: true });
    const e = await (async () => {
      for await (const _ of stream) void _;
    })().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    const refused = await client().responses.create({ model: 'gpu:m', input: 'hi', previous_response_id: 'resp_1' }).catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
  });

  it('store: true is named as dropped; a provider without responses: chat gets /responses as it is', async () => {
    const r = await call(url, { path: '/v1/responses', body: JSON.stringify({ model: 'gpu:m', input: 'hi', store: true }) });
    expect(r.headers['x-tunnel-manager-dropped']).toBe('store');
    await call(url, { path: '/v1/responses', body: JSON.stringify({ model: 'plain:m', input: 'hi' }) });
    expect(last().url).toBe('/v1/responses');
  });

  it("the AI SDK's openai('…') (the Responses API): generateText with a tool loop, and streamText", async () => {
    const provider = createOpenAI({ baseURL: `${url}/v1`, apiKey: 'k' });
    const r = await generateText({
      model: provider('gpu:m'),
      prompt: 'weather?',
      tools: { weather: tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }), execute: async ({ city }) => `sunny in ${city}` }) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(r.text).toBe('the tool said: sunny in Paris');
    const s = streamText({ model: provider('gpu:m'), prompt: 'hi', maxRetries: 0 });
    let text = '';
    for await (const t of s.textStream) text += t;
    expect(text).toBe('hello from vllm');
  });
});
