// The Anthropic-like mock, checked first against the SDK of the API it imitates.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_ANTHROPIC_KEY, startMockAnthropic, type MockAnthropic } from './mock-anthropic.js';

let mock: MockAnthropic;
beforeAll(async () => {
  mock = await startMockAnthropic();
});
afterAll(async () => {
  await mock?.close();
});

const client = (apiKey = MOCK_ANTHROPIC_KEY) => new Anthropic({ baseURL: mock.baseUrl.replace(/\/v1$/, ''), apiKey, maxRetries: 0 });
const tools: Anthropic.Tool[] = [
  { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'time', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
];

describe('the Anthropic-like mock, read by the Anthropic SDK', () => {
  it('answers text and tool_use, and refuses as the API does', async () => {
    const r = await client().messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.content).toEqual([{ type: 'text', text: 'hello from claude' }]);
    const t = await client().messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools });
    expect(t.content[0]).toMatchObject({ type: 'tool_use', name: 'weather', input: { city: 'Paris' } });
    expect(await client('wrong').messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.AuthenticationError);
    const noMax = await client().messages.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] } as never).catch((e: unknown) => e);
    expect(noMax).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('streams parallel tool_use blocks that the SDK assembles', async () => {
    const final = await client().messages.stream({ model: 'parallel', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools }).finalMessage();
    expect(final.content.map((b) => (b.type === 'tool_use' ? b.input : b.type))).toEqual([{ city: 'Paris' }, { city: 'Oslo' }]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage.output_tokens).toBe(6);
  });

  it('cuts the stream of model "cut"', async () => {
    const e = await client().messages.stream({ model: 'cut', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
  });
});
