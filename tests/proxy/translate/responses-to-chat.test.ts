// Responses → chat completions, as pure functions: the request as a table of cases,
// the answer and the stream's events.
import { describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { chatToResponsesAnswer } from '../../../src/proxy/translate/chat-to-responses-answer.js';
import { ChatToResponsesStream } from '../../../src/proxy/translate/chat-to-responses-stream.js';
import { responsesToChatRequest } from '../../../src/proxy/translate/responses-to-chat-request.js';
import { readEvents } from '../../../src/proxy/translate/sse-events.js';

const base = { model: 'p:m' };

describe('the request', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, string[]?][] = [
    ['a string input', { ...base, input: 'hi' }, { ...base, messages: [{ role: 'user', content: 'hi' }] }],
    [
      'message items, developer as system, output_text of the assistant, an image by URL',
      { ...base, input: [{ role: 'developer', content: 'd' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] }, { role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' }] }] },
      { ...base, messages: [{ role: 'system', content: 'd' }, { role: 'assistant', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'auto' } }] }] },
    ],
    [
      'text then two calls make one assistant message; outputs become tool messages',
      {
        ...base,
        input: [
          { role: 'assistant', content: 'looking' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"a":1}' },
          { type: 'function_call_output', call_id: 'c1', output: 'one' },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
          { type: 'reasoning', id: 'rs', summary: [] },
        ],
      },
      {
        ...base,
        messages: [
          { role: 'assistant', content: 'looking', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"a":1}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'one' },
          { role: 'tool', tool_call_id: 'c2', content: 'two' },
        ],
      },
      ['input[].reasoning'],
    ],
    [
      'tools, tool_choice, text.format, limits and sampling',
      { ...base, input: 'x', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }], tool_choice: { type: 'function', name: 'f' }, text: { format: { type: 'json_schema', name: 'o', schema: { type: 'object' }, strict: true } }, max_output_tokens: 9, top_p: 0.5, parallel_tool_calls: false, stream: true },
      {
        ...base,
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
        response_format: { type: 'json_schema', json_schema: { name: 'o', schema: { type: 'object' }, strict: true } },
        max_tokens: 9,
        top_p: 0.5,
        parallel_tool_calls: false,
        stream: true,
        stream_options: { include_usage: true },
      },
    ],
    ['fields without a counterpart named', { ...base, input: 'x', reasoning: { effort: 'low' }, metadata: { a: '1' }, truncation: 'auto', store: true }, { ...base, messages: [{ role: 'user', content: 'x' }] }, ['reasoning', 'metadata', 'truncation', 'store']],
    ['store: false says nothing', { ...base, input: 'x', store: false }, { ...base, messages: [{ role: 'user', content: 'x' }] }],
    [
      "fields named like an object's own are unknown fields like any other",
      { ...base, input: 'hi', ...(JSON.parse('{"constructor": 1, "toString": "x", "__proto__": {"a": 1}}') as Record<string, unknown>) },
      { ...base, messages: [{ role: 'user', content: 'hi' }] },
      ['constructor', 'toString', '__proto__'],
    ],
  ];
  it.each(cases)('%s', (_, input, body, dropped = []) => {
    expect(responsesToChatRequest(input)).toEqual({ ok: true, value: { body, dropped } });
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ['previous_response_id', { ...base, input: 'x', previous_response_id: 'r' }, 'previous_response_id'],
    ['background', { ...base, input: 'x', background: true }, 'background'],
    ['a hosted tool', { ...base, input: 'x', tools: [{ type: 'web_search' }] }, 'tools[0].type'],
    ['an image by file id', { ...base, input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }, 'input[0].content[0].type'],
    ['a file', { ...base, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input[0].content[0].type'],
    ['an item of a hosted tool', { ...base, input: [{ type: 'web_search_call', id: 'w' }] }, 'input[0].type'],
  ];
  it.each(refusals)('refuses %s with a 400 naming the field', (_, input, param) => {
    const r = responsesToChatRequest(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ status: 400, param });
  });

  it('the provider option is checked: responses is native or chat', () => {
    const r = proxySchema.safeParse({ providers: { p: { base_url: 'http://127.0.0.1:1/v1', responses: 'sometimes' } } });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/expected native .* or chat/);
  });
});

describe('the answer', () => {
  const ctx = { request: { model: 'p:m', input: 'x', temperature: 0.5 } };
  it('text and calls as output items; length as incomplete', () => {
    const chat = { id: 'c1', created: 5, model: 'm', choices: [{ message: { content: 'hi', tool_calls: [{ id: 'k', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'length' }], usage: { prompt_tokens: 3, completion_tokens: 2 } };
    const r = chatToResponsesAnswer(chat, ctx);
    expect(r.ok && r.value).toMatchObject({
      id: 'resp_c1',
      object: 'response',
      created_at: 5,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      temperature: 0.5,
      output: [
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }] },
        { type: 'function_call', call_id: 'k', name: 'f', arguments: '{}', status: 'completed' },
      ],
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    });
  });

  it('the stream: numbered events, items opened and closed in order, completed with usage; a cut is null', () => {
    const s = new ChatToResponsesStream(ctx);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ name: null, data: JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }) });
    let text = '';
    for (const e of [chunk({ content: 'a' }), chunk({ tool_calls: [{ index: 0, id: 'k', function: { name: 'f', arguments: '{"x"' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }), chunk({}, 'tool_calls'), { name: null, data: JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }) }, { name: null, data: '[DONE]' }]) text += s.event(e);
    const events = readEvents(text).map((e) => JSON.parse(e.data));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1).response.output.map((o: any) => o.type)).toEqual(['message', 'function_call']);
    expect(events.at(-1).response.usage.total_tokens).toBe(2);
    expect(events[11].arguments).toBe('{"x":1}');
    const cut = new ChatToResponsesStream(ctx);
    cut.event(chunk({ content: 'a' }));
    expect(cut.end()).toBeNull();
  });
});
