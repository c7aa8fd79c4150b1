// Messages → chat completions, as pure functions: the request, the whole answer, and
// the stream event by event, each as a table of cases.
import { describe, expect, it } from 'vitest';
import { chatToMessagesAnswer } from '../../../src/proxy/translate/chat-to-messages-answer.js';
import { ChatToMessagesStream } from '../../../src/proxy/translate/chat-to-messages-stream.js';
import { messagesToChatRequest } from '../../../src/proxy/translate/messages-to-chat-request.js';
import { readEvents } from '../../../src/proxy/translate/sse-events.js';

const base = { model: 'p:m', max_tokens: 10 };
const user = (content: unknown) => ({ ...base, messages: [{ role: 'user', content }] });

describe('the request', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, string[]?][] = [
    ['plain text', user('hi'), { ...base, messages: [{ role: 'user', content: 'hi' }] }],
    ['system as a string', { ...user('hi'), system: 'sys' }, { ...base, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi' }] }],
    [
      'system as blocks, joined; cache_control named',
      { ...user('hi'), system: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cache_control: { type: 'ephemeral' } }] },
      { ...base, messages: [{ role: 'system', content: 'a\n\nb' }, { role: 'user', content: 'hi' }] },
      ['system[].cache_control'],
    ],
    ['text blocks become one string', user([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }]), { ...base, messages: [{ role: 'user', content: 'ab' }] }],
    [
      'images as base64 and as a URL become image_url parts',
      user([{ type: 'text', text: 'see' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }]),
      { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] },
    ],
    ['stream asks for usage', { ...user('hi'), stream: true }, { ...base, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }],
    [
      'sampling, stop sequences, metadata',
      { ...user('hi'), temperature: 0, top_p: 0.5, top_k: 5, stop_sequences: ['x'], metadata: { user_id: 'u' } },
      { ...base, temperature: 0, top_p: 0.5, top_k: 5, stop: ['x'], user: 'u', messages: [{ role: 'user', content: 'hi' }] },
    ],
    [
      'tool_choice any, no parallel calls',
      { ...user('hi'), tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'any', disable_parallel_tool_use: true } },
      { ...base, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'required', parallel_tool_calls: false },
    ],
    ['tool_choice tool', { ...user('hi'), tool_choice: { type: 'tool', name: 'f' } }, { ...base, messages: [{ role: 'user', content: 'hi' }], tool_choice: { type: 'function', function: { name: 'f' } } }],
    ['tool_choice none', { ...user('hi'), tool_choice: { type: 'none' } }, { ...base, messages: [{ role: 'user', content: 'hi' }], tool_choice: 'none' }],
    [
      'assistant text and tool_use; tool results first, then the user\'s text; is_error said in the text',
      {
        ...base,
        messages: [
          { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'text', text: 'let me look' }, { type: 'tool_use', id: 'tu_1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'tu_2', name: 'g', input: {} }] },
          { role: 'user', content: [{ type: 'text', text: 'and?' }, { type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'text', text: 'one' }] }, { type: 'tool_result', tool_use_id: 'tu_2', content: 'boom', is_error: true }] },
        ],
      },
      {
        ...base,
        messages: [
          { role: 'assistant', content: 'let me look', tool_calls: [{ id: 'tu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }, { id: 'tu_2', type: 'function', function: { name: 'g', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'tu_1', content: 'one' },
          { role: 'tool', tool_call_id: 'tu_2', content: 'Error: boom' },
          { role: 'user', content: 'and?' },
        ],
      },
      ['messages[].content[].thinking'],
    ],
    ['output_format as response_format', { ...user('hi'), output_format: { type: 'json_schema', schema: { type: 'object' } } }, { ...base, messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' }, strict: true } } }],
    ['unknown and unmappable fields are dropped and named', { ...user('hi'), thinking: { type: 'enabled' }, service_tier: 'auto', frobnicate: 1 }, { ...base, messages: [{ role: 'user', content: 'hi' }] }, ['thinking', 'service_tier', 'frobnicate']],
    [
      "fields named like an object's own are unknown fields like any other",
      { ...user('hi'), ...(JSON.parse('{"constructor": 1, "toString": "x", "__proto__": {"a": 1}}') as Record<string, unknown>) },
      { ...base, messages: [{ role: 'user', content: 'hi' }] },
      ['constructor', 'toString', '__proto__'],
    ],
  ];
  it.each(cases)('%s', (_, input, body, dropped = []) => {
    const r = messagesToChatRequest(input);
    expect(r).toEqual({ ok: true, value: { body, dropped } });
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ['a server tool', { ...user('hi'), tools: [{ type: 'bash_20250124', name: 'bash' }] }, 'tools[0].type'],
    ['a document block', user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'x' } }]), 'messages[0].content[0].type'],
    ['an image from a file id', user([{ type: 'image', source: { type: 'file', file_id: 'f' } }]), 'messages[0].content[0].source.type'],
    ['an image in a tool result', user([{ type: 'tool_result', tool_use_id: 'x', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }]), 'messages[0].content[0].content[0]'],
    ['mcp_servers', { ...user('hi'), mcp_servers: [] }, 'mcp_servers'],
    ['container', { ...user('hi'), container: 'c' }, 'container'],
    ['a role that is not user or assistant', { ...base, messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role'],
    ['tool_use from the user', user([{ type: 'tool_use', id: 'a', name: 'f', input: {} }]), 'messages[0].content[0].type'],
    ['a bad tool_choice', { ...user('hi'), tool_choice: { type: 'sometimes' } }, 'tool_choice.type'],
    ['stop_sequences not strings', { ...user('hi'), stop_sequences: [1] }, 'stop_sequences'],
  ];
  it.each(refusals)('refuses %s with a 400 naming the field', (_, input, param) => {
    const r = messagesToChatRequest(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.status).toBe(400);
      expect(r.error.param).toBe(param);
    }
  });
});

describe('the whole answer', () => {
  const ctx = { stopSequences: ['END'] };
  const chat = (message: Record<string, unknown>, finish: string, extra: Record<string, unknown> = {}) => ({ id: 'c1', model: 'm', choices: [{ index: 0, message, finish_reason: finish, ...extra }], usage: { prompt_tokens: 10, completion_tokens: 3 } });
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['text, end_turn', chat({ role: 'assistant', content: 'hi' }, 'stop'), { content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null }],
    ['a matched stop sequence (vLLM\'s stop_reason)', chat({ content: 'hi' }, 'stop', { stop_reason: 'END' }), { stop_reason: 'stop_sequence', stop_sequence: 'END' }],
    ['length', chat({ content: 'hi' }, 'length'), { stop_reason: 'max_tokens' }],
    ['content_filter', chat({ content: '' }, 'content_filter'), { content: [], stop_reason: 'refusal' }],
    [
      'tool calls, content null',
      chat({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }, { id: 'call_2', type: 'function', function: { name: 'g', arguments: '' } }] }, 'tool_calls'),
      { content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'call_2', name: 'g', input: {} }], stop_reason: 'tool_use' },
    ],
    ['reasoning first', chat({ content: 'x', reasoning_content: 'hmm' }, 'stop'), { content: [{ type: 'thinking', thinking: 'hmm', signature: '' }, { type: 'text', text: 'x' }] }],
    ['usage with cached tokens', { ...chat({ content: 'x' }, 'stop'), usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } }, { usage: { input_tokens: 6, output_tokens: 2, cache_read_input_tokens: 4 } }],
  ];
  it.each(cases)('%s', (_, input, expected) => {
    const r = chatToMessagesAnswer(input, ctx);
    expect(r.ok && r.value).toMatchObject({ id: 'c1', type: 'message', role: 'assistant', model: 'm', ...expected });
  });

  it('tool arguments that are not a JSON object are a 502 naming the tool', () => {
    const r = chatToMessagesAnswer(chat({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{"a":' } }] }, 'tool_calls'), ctx);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ status: 502, code: 'upstream_bad_tool_call' });
  });
});

describe('the stream, event by event', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ name: null, data: JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }) });
  const usage = { name: null, data: JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } }) };
  const done = { name: null, data: '[DONE]' };
  const run = (events: { name: null; data: string }[], end = true) => {
    const s = new ChatToMessagesStream({ stopSequences: [] });
    const per = events.map((e) => readEvents(s.event(e)).map((x) => JSON.parse(x.data)));
    const closing = end ? s.end() : null;
    return { per, closing: closing === null ? null : readEvents(closing).map((x) => JSON.parse(x.data)) };
  };

  it('text: message_start with the first chunk, a block per kind, deltas at once, the close at [DONE]', () => {
    const { per, closing } = run([chunk({ role: 'assistant', content: '' }), chunk({ content: 'he' }), chunk({ content: 'llo' }), chunk({}, 'stop'), usage, done]);
    expect(per[0]!.map((e) => e.type)).toEqual(['message_start']);
    expect(per[1]).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'he' } },
    ]);
    expect(per[2]).toEqual([{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'llo' } }]);
    expect(per[3]).toEqual([]);
    expect(per[4]).toEqual([]);
    expect(per[5]).toEqual([
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 7, output_tokens: 2 } },
      { type: 'message_stop' },
    ]);
    expect(closing).toEqual([]);
  });

  it('text then parallel tool calls: each tool its block, arguments as input_json_delta', () => {
    const { per } = run([
      chunk({ content: 'ok' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      done,
    ]);
    expect(per[1]).toEqual([
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } },
    ]);
    expect(per[2]).toEqual([{ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"x":' } }]);
    expect(per[4]).toEqual([
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
    ]);
    expect(per[6]!.map((e) => e.type)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(per[6]![1].delta.stop_reason).toBe('tool_use');
  });

  it('reasoning becomes a thinking block before the text', () => {
    const { per } = run([chunk({ reasoning_content: 'hm' }), chunk({ content: 'x' }), chunk({}, 'stop'), done]);
    expect(per[0]!.slice(1)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } },
    ]);
    expect(per[1]![0]).toEqual({ type: 'content_block_stop', index: 0 });
  });

  it('an end after finish_reason without [DONE] closes; an end before it is a cut (null)', () => {
    expect(run([chunk({ content: 'x' }), chunk({}, 'length')]).closing!.map((e) => e.type)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(run([chunk({ content: 'x' })]).closing).toBeNull();
  });

  it('an error chunk becomes an error event, and nothing follows', () => {
    const s = new ChatToMessagesStream({ stopSequences: [] });
    s.event(chunk({ content: 'x' }));
    const e = readEvents(s.event({ name: null, data: JSON.stringify({ error: { message: 'out of memory' } }) }));
    expect(e[0]!.name).toBe('error');
    expect(JSON.parse(e[0]!.data)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(JSON.parse(e[0]!.data).error.message).toContain('out of memory');
    expect(s.event(done)).toBe('');
    expect(s.end()).toBe('');
  });
});
