// The Anthropic SDK, as Claude Code uses it, against a vLLM-like chat-completion
// server through the proxy: /v1/messages is translated to /chat/completions and the
// answer back, tools and streams included.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { call, eventually } from '../harness.js';
import { startMockVllm, type MockVllm } from './mock-vllm.js';

let mock: MockVllm;
let proxy: ProxyServer;
let url: string;

beforeAll(async () => {
  mock = await startMockVllm();
  const config = proxySchema.parse({
    providers: {
      gpu: { base_url: mock.baseUrl, api_key: 'sk-upstream-vllm-key' },
      // A server without /tokenize: the mock answers 404 at /elsewhere/tokenize.
      notok: { base_url: mock.baseUrl.replace(/\/v1$/, '/elsewhere/v1') },
      gpu2: { base_url: mock.baseUrl },
    },
    aliases: { 'claude-sonnet-4': ['gpu:busy', 'gpu2:qwen3'] },
  });
  proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => config } });
  url = `http://127.0.0.1:${proxy.port}`;
});
afterAll(async () => {
  await proxy?.close();
  await mock?.close();
});

const client = () => new Anthropic({ baseURL: url, apiKey: 'sk-client', maxRetries: 0 });
const last = () => mock.received[mock.received.length - 1]!;
const tools: Anthropic.Tool[] = [
  { name: 'weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  { name: 'time', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
];

const sampling = { temperature: 0.2, top_p: 0.9, top_k: 40 };

describe('the Anthropic SDK against an OpenAI-format provider', () => {
  it('messages.create: text, with the system prompt, stop sequences and sampling fields mapped', async () => {
    const r = await client().messages.create({
      model: 'gpu:qwen3:8b',
      max_tokens: 100,
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'hi' }],
      // Sampling fields that older SDKs (and Claude Code's) still send; this SDK's types no longer list them.
      ...sampling,
      metadata: { user_id: 'u-1' },
    });
    expect(r.content).toEqual([{ type: 'text', text: 'hello from vllm' }]);
    expect(r.stop_reason).toBe('end_turn');
    expect(r.usage).toMatchObject({ input_tokens: 5, output_tokens: 5, cache_read_input_tokens: 16 });
    expect(last().url).toBe('/v1/chat/completions');
    expect(last().headers.authorization).toBe('Bearer sk-upstream-vllm-key');
    expect(last().headers['x-api-key']).toBeUndefined();
    expect(last().json).toEqual({
      model: 'qwen3:8b',
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      user: 'u-1',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    });
    const stopped = await client().messages.create({ model: 'gpu:qwen3:8b', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stop_sequences: [' vllm'] });
    expect(stopped.stop_reason).toBe('stop_sequence');
    expect(stopped.stop_sequence).toBe(' vllm');
    expect(last().json.stop).toEqual([' vllm']);
    const short = await client().messages.create({ model: 'gpu:qwen3:8b', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] });
    expect(short.stop_reason).toBe('max_tokens');
  });

  it('the header names what has no counterpart; the request still goes', async () => {
    const a = await call(url, {
      path: '/v1/messages',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpu:m', max_tokens: 10, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] }),
    });
    expect(a.status).toBe(200);
    expect(a.headers['x-tunnel-manager-dropped']).toBe('thinking,messages[].content[].cache_control');
    expect(last().json.thinking).toBeUndefined();
  });

  it('a tool loop over two turns with messages.create, ids kept', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'weather in Paris?' }];
    const first = await client().messages.create({ model: 'gpu:m', max_tokens: 100, messages, tools, tool_choice: { type: 'auto' } });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(use).toMatchObject({ name: 'weather', input: { city: 'Paris' } });
    expect(last().json.tools[0]).toEqual({ type: 'function', function: { name: 'weather', description: 'The weather in a city', parameters: tools[0]!.input_schema } });
    expect(last().json.tool_choice).toBe('auto');
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 °C' }] });
    const second = await client().messages.create({ model: 'gpu:m', max_tokens: 100, messages, tools });
    expect(second.content).toEqual([{ type: 'text', text: 'the tool said: sunny, 21 °C' }]);
    expect(last().json.messages).toEqual([
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: use.id, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: use.id, content: 'sunny, 21 °C' },
    ]);
  });

  it('messages.stream with parallel tool calls: blocks and input_json_delta as the SDK expects', async () => {
    const stream = client().messages.stream({ model: 'gpu:parallel', max_tokens: 100, messages: [{ role: 'user', content: 'weather?' }], tools });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : b.type))).toEqual([
      ['weather', { city: 'Paris' }],
      ['time', { city: 'Oslo' }],
    ]);
    expect(final.usage).toMatchObject({ input_tokens: 5, output_tokens: 5, cache_read_input_tokens: 16 });
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start').length).toBe(2);
    expect(types.filter((t) => t === 'content_block_stop').length).toBe(2);
    expect(last().json.stream_options).toEqual({ include_usage: true });
  });

  it('messages.stream of text and reasoning, then the tool loop streamed', async () => {
    const s = client().messages.stream({ model: 'gpu:reasoning', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    s.on('text', (t) => (text += t));
    const final = await s.finalMessage();
    expect(text).toBe('hello from vllm');
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'weather?' }];
    const first = await client().messages.stream({ model: 'gpu:m', max_tokens: 100, messages, tools }).finalMessage();
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'rain' }] }] });
    const second = await client().messages.stream({ model: 'gpu:m', max_tokens: 100, messages, tools }).finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'the tool said: rain' }]);
  });

  it('a stream the provider cuts ends with an error event the SDK raises', async () => {
    const s = client().messages.stream({ model: 'gpu:cut', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const e = await s.finalMessage().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect(String((e as Error).message)).toMatch(/ended its stream before its answer was complete|closed the connection/);
  });

  it('messages.countTokens through the provider\'s /tokenize; a 501 that says so without one', async () => {
    const r = await client().messages.countTokens({ model: 'gpu:qwen3:8b', system: 'sys', messages: [{ role: 'user', content: 'hi' }], tools });
    expect(r.input_tokens).toBe(11);
    expect(last().url).toBe('/tokenize');
    expect(last().json).toMatchObject({ model: 'qwen3:8b', add_generation_prompt: true, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi' }], content: 'sys\nhi' });
    expect(last().json.tools).toHaveLength(2);
    const e = await client().messages.countTokens({ model: 'notok:m', messages: [{ role: 'user', content: 'hi' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as InstanceType<typeof Anthropic.APIError>).status).toBe(501);
    expect((e as Error).message).toMatch(/provider \\?"notok\\?" speaks the OpenAI format and has no \/tokenize endpoint/);
    expect(last().url).toBe('/elsewhere/tokenize');
  });

  it('an alias falls back from a target that answers 503 to the next, translated for each; a lone 503 keeps its status', async () => {
    const r = await client().messages.create({ model: 'claude-sonnet-4', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.content).toEqual([{ type: 'text', text: 'hello from vllm' }]);
    expect(mock.received.slice(-2).map((x) => x.json.model)).toEqual(['busy', 'qwen3']);
    const e = await client().messages.create({ model: 'gpu:busy', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    expect((e as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('the engine is busy') } });
  });

  it('a client that leaves mid-stream: the provider\'s request is aborted at once', async () => {
    const controller = new AbortController();
    const s = client().messages.stream({ model: 'gpu:stall', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, { signal: controller.signal });
    await new Promise<void>((resolve) => s.on('streamEvent', (e) => e.type === 'message_start' && resolve()));
    const upstream = last();
    expect(upstream.closed).toBeUndefined();
    controller.abort();
    await s.done().catch(() => undefined);
    await eventually(() => upstream.closed === true, 'the provider saw the proxy hang up');
  });

  it('the provider\'s key is blanked out of a translated answer that quotes it', async () => {
    const r = await call(url, { path: '/v1/messages', headers: { 'x-api-key': 'k' }, body: JSON.stringify({ model: 'gpu:echo', max_tokens: 10, messages: [{ role: 'user', content: 'my key is sk-upstream-vllm-key' }] }) });
    expect(r.status).toBe(200);
    expect(r.json.content[0].text).toBe('my key is ***');
    expect(r.text).not.toContain('sk-upstream-vllm-key');
  });

  it('a field with no counterpart is a 400 naming it, in Anthropic\'s error shape', async () => {
    const e = await client()
      .messages.create({ model: 'gpu:m', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.BadRequestError);
    expect((e as Error).message).toMatch(/tools\[0\]\.type.*web_search_20250305/);
  });

  it('an upstream error keeps its status, in the client\'s shape, without the key', async () => {
    const e = await client().messages.create({ model: 'gpu:bad-tool-args', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect((e as Error).message).toMatch(/not a JSON object/);
  });
});
