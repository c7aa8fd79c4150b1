// The official openai client against a `format: anthropic` provider through the
// proxy: /v1/chat/completions is translated to /messages and the answer back, tools
// and streams included.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { call } from '../harness.js';
import { MOCK_ANTHROPIC_KEY, startMockAnthropic, type MockAnthropic } from './mock-anthropic.js';

let mock: MockAnthropic;
let proxy: ProxyServer;
let url: string;

beforeAll(async () => {
  mock = await startMockAnthropic();
  const config = proxySchema.parse({ providers: { claude: { base_url: mock.baseUrl, api_key: MOCK_ANTHROPIC_KEY, format: 'anthropic' } } });
  proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => config } });
  url = `http://127.0.0.1:${proxy.port}`;
});
afterAll(async () => {
  await proxy?.close();
  await mock?.close();
});

const client = () => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-client', maxRetries: 0 });
const last = () => mock.received[mock.received.length - 1]!;
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'time', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

describe('the openai client against a Messages provider', () => {
  it('chat.completions.create: max_tokens supplied, system lifted out, the key as x-api-key, anthropic-version sent', async () => {
    const r = await client().chat.completions.create({ model: 'claude:claude-sonnet-4', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }], temperature: 0.5, stop: 'never', user: 'u-1' });
    expect(r.choices[0]?.message.content).toBe('hello from claude');
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(r.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 6, total_tokens: 26, prompt_tokens_details: { cached_tokens: 8 } });
    expect(last().url).toBe('/v1/messages');
    expect(last().headers['x-api-key']).toBe(MOCK_ANTHROPIC_KEY);
    expect(last().headers.authorization).toBeUndefined();
    expect(last().headers['anthropic-version']).toBe('2023-06-01');
    expect(last().json).toEqual({ model: 'claude-sonnet-4', max_tokens: 4096, temperature: 0.5, stop_sequences: ['never'], metadata: { user_id: 'u-1' }, system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  });

  it('max_completion_tokens (or max_tokens) is the limit; length and stop sequences come back as finish reasons', async () => {
    const short = await client().chat.completions.create({ model: 'claude:c', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 2 });
    expect(last().json.max_tokens).toBe(2);
    expect(short.choices[0]?.finish_reason).toBe('length');
    await client().chat.completions.create({ model: 'claude:c', messages: [{ role: 'user', content: 'hi' }], max_tokens: 7 });
    expect(last().json.max_tokens).toBe(7);
  });

  it('the tool loop over two turns, ids kept, content null on the assistant turn', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris?' }];
    const first = await client().chat.completions.create({ model: 'claude:c', messages, tools, tool_choice: 'auto', parallel_tool_calls: false });
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const msg = first.choices[0]!.message;
    expect(msg.content).toBeNull();
    const toolCall = msg.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ city: 'Paris' });
    expect(last().json.tools[0]).toEqual({ name: 'weather', description: 'The weather in a city', input_schema: (tools[0] as OpenAI.ChatCompletionFunctionTool).function.parameters });
    expect(last().json.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    messages.push(msg, { role: 'tool', tool_call_id: toolCall.id, content: 'sunny' });
    const second = await client().chat.completions.create({ model: 'claude:c', messages, tools });
    expect(second.choices[0]?.message.content).toBe('the tool said: sunny');
    expect(last().json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: toolCall.id, name: 'weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolCall.id, content: 'sunny' }] },
    ]);
  });

  it('streams parallel tool calls the client assembles, usage when asked', async () => {
    const runner = client().chat.completions.stream({ model: 'claude:parallel', messages: [{ role: 'user', content: 'weather?' }], tools, stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['toolu_001', 'weather', { city: 'Paris' }],
      ['toolu_011', 'time', { city: 'Oslo' }],
    ]);
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(final.usage?.completion_tokens).toBe(6);
  });

  it('streams text chunk by chunk, ending with [DONE]', async () => {
    const stream = await client().chat.completions.create({ model: 'claude:c', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const parts: string[] = [];
    for await (const c of stream) parts.push(c.choices[0]?.delta.content ?? '');
    expect(parts.join('')).toBe('hello from claude');
    expect(parts.length).toBeGreaterThan(3);
    const raw = await call(url, { body: JSON.stringify({ model: 'claude:c', messages: [{ role: 'user', content: 'hi' }], stream: true }) });
    expect(raw.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('a stream the provider cuts ends with an error event, never [DONE]', async () => {
    const raw = await call(url, { body: JSON.stringify({ model: 'claude:cut', messages: [{ role: 'user', content: 'hi' }], stream: true }) });
    expect(raw.text).toMatch(/data: \{"error":\{.*"code":"upstream_(disconnected|stream_error)"\}\}\n\n$/);
    expect(raw.text).not.toContain('[DONE]');
    const stream = await client().chat.completions.create({ model: 'claude:cut', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const e = await (async () => {
      for await (const _ of stream) void _;
    })().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
  });

  it('an upstream error keeps its status and message, in OpenAI\'s shape', async () => {
    const e = await client().chat.completions.create({ model: 'claude:overloaded', messages: [{ role: 'user', content: 'hi' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(529);
    expect((e as Error).message).toMatch(/Overloaded/);
  });

  it('what has no counterpart: n > 1 and logprobs refused by name, penalties dropped and named', async () => {
    const n = await client().chat.completions.create({ model: 'claude:c', messages: [{ role: 'user', content: 'hi' }], n: 2 }).catch((x: unknown) => x);
    expect(n).toBeInstanceOf(OpenAI.BadRequestError);
    expect((n as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n');
    const r = await call(url, { body: JSON.stringify({ model: 'claude:c', messages: [{ role: 'user', content: 'hi' }], frequency_penalty: 0.5, seed: 3 }) });
    expect(r.status).toBe(200);
    expect(r.headers['x-tunnel-manager-dropped']).toBe('frequency_penalty,seed');
  });
});
