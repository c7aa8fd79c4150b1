// The vLLM-like mock, checked first against the client it imitates a server for:
// the official `openai` client reads its answers, tool calls and streams as it reads vLLM's.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockVllm, type MockVllm } from './mock-vllm.js';

let mock: MockVllm;
beforeAll(async () => {
  mock = await startMockVllm();
});
afterAll(async () => {
  await mock?.close();
});

const client = () => new OpenAI({ baseURL: mock.baseUrl, apiKey: 'EMPTY', maxRetries: 0 });
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'time', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

describe('the vLLM-like mock, read by the openai client', () => {
  it('answers text, and with tools a tool call the client parses', async () => {
    const r = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]?.message.content).toBe('hello from vllm');
    expect(r.usage?.prompt_tokens).toBe(21);
    const t = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'weather?' }], tools });
    expect(t.choices[0]?.finish_reason).toBe('tool_calls');
    const call = t.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });

  it('streams parallel tool calls that the client assembles', async () => {
    const runner = client().chat.completions.stream({ model: 'parallel', messages: [{ role: 'user', content: 'weather?' }], tools, stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['weather', { city: 'Paris' }],
      ['time', { city: 'Oslo' }],
    ]);
    expect(final.usage?.completion_tokens).toBe(5);
  });

  it('cuts the stream of model "cut"', async () => {
    const stream = await client().chat.completions.create({ model: 'cut', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const seen = await (async () => {
      try {
        for await (const _ of stream) void _;
        return 'ended';
      } catch (e) {
        return e;
      }
    })();
    expect(seen).not.toBe('ended');
  });
});
