// Chat completions → Messages, as pure functions: the request, the whole answer, and
// the stream event by event, each as a table of cases.
import { describe, expect, it } from 'vitest';
import { chatToMessagesRequest } from '../../../src/proxy/translate/chat-to-messages-request.js';
import { messagesToChatAnswer } from '../../../src/proxy/translate/messages-to-chat-answer.js';
import { MessagesToChatStream } from '../../../src/proxy/translate/messages-to-chat-stream.js';
import { readEvents } from '../../../src/proxy/translate/sse-events.js';

const base = { model: 'p:m' };
const out = { model: 'p:m', max_tokens: 4096 };
const hi = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
const user = (content: unknown) => ({ ...base, messages: [{ role: 'user', content }] });

describe('the request', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, string[]?][] = [
    ['max_tokens supplied when absent', user('hi'), { ...out, messages: hi }],
    ['max_completion_tokens wins over max_tokens', { ...user('hi'), max_tokens: 9, max_completion_tokens: 5 }, { ...out, max_tokens: 5, messages: hi }],
    ['max_tokens null is absent', { ...user('hi'), max_tokens: null }, { ...out, messages: hi }],
    ['system and developer messages become system', { ...base, messages: [{ role: 'system', content: 'a' }, { role: 'developer', content: [{ type: 'text', text: 'b' }] }, { role: 'user', content: 'hi' }] }, { ...out, system: 'a\n\nb', messages: hi }],
    [
      'images: a data URL as base64, any other as a URL',
      user([{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }]),
      { ...out, messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] },
    ],
    ['stop as a string, sampling, user', { ...user('hi'), stop: 'x', temperature: 0.1, top_p: 0.2, top_k: 3, stream: true, stream_options: { include_usage: true }, user: 'u' }, { ...out, stop_sequences: ['x'], temperature: 0.1, top_p: 0.2, top_k: 3, stream: true, metadata: { user_id: 'u' }, messages: hi }],
    [
      'tool calls with content null, tool results joined to the next user turn',
      {
        ...base,
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }, { id: 'c2', type: 'function', function: { name: 'g', arguments: '' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'one' },
          { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'two' }] },
          { role: 'user', content: 'so?' },
        ],
      },
      {
        ...out,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'c2', name: 'g', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'one' }, { type: 'tool_result', tool_use_id: 'c2', content: 'two' }, { type: 'text', text: 'so?' }] },
        ],
      },
    ],
    [
      'tools, a named tool_choice; strict named',
      { ...user('hi'), tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }, { type: 'function', function: { name: 'g' } }], tool_choice: { type: 'function', function: { name: 'f' } } },
      { ...out, messages: hi, tools: [{ name: 'f', description: 'd', input_schema: { type: 'object' } }, { name: 'g', input_schema: { type: 'object', properties: {} } }], tool_choice: { type: 'tool', name: 'f' } },
      ['tools[].function.strict'],
    ],
    ['tool_choice required, no parallel calls', { ...user('hi'), tool_choice: 'required', parallel_tool_calls: false }, { ...out, messages: hi, tool_choice: { type: 'any', disable_parallel_tool_use: true } }],
    ['tool_choice none', { ...user('hi'), tool_choice: 'none' }, { ...out, messages: hi, tool_choice: { type: 'none' } }],
    ['json_schema as output_format', { ...user('hi'), response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } }, { ...out, messages: hi, output_format: { type: 'json_schema', schema: { type: 'object' } } }],
    ['fields without a counterpart dropped and named', { ...user('hi'), frequency_penalty: 1, presence_penalty: 1, seed: 1, logit_bias: {}, messages: [{ role: 'user', content: 'hi', name: 'bob' }] }, { ...out, messages: hi }, ['frequency_penalty', 'presence_penalty', 'seed', 'logit_bias', 'messages[].name']],
  ];
  it.each(cases)('%s', (_, input, body, dropped = []) => {
    expect(chatToMessagesRequest(input)).toEqual({ ok: true, value: { body, dropped } });
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ['n > 1', { ...user('hi'), n: 3 }, 'n'],
    ['logprobs', { ...user('hi'), logprobs: true }, 'logprobs'],
    ['audio output', { ...user('hi'), modalities: ['text', 'audio'] }, 'audio'],
    ['json_object', { ...user('hi'), response_format: { type: 'json_object' } }, 'response_format'],
    ['an audio part', user([{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }]), 'messages[0].content[0].type'],
    ['a function role', { ...base, messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
    ['tool call arguments that are not JSON', { ...base, messages: [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{' } }] }] }, 'messages[0].tool_calls[0].function.arguments'],
    ['a tool that is not a function', { ...user('hi'), tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0].type'],
    ['max_tokens 0', { ...user('hi'), max_tokens: 0 }, 'max_tokens'],
  ];
  it.each(refusals)('refuses %s with a 400 naming the field', (_, input, param) => {
    const r = chatToMessagesRequest(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ status: 400, param });
  });
});

describe('the whole answer', () => {
  const msg = (content: unknown[], stop: string) => ({ id: 'msg_1', model: 'm', content, stop_reason: stop, usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 4, cache_creation_input_tokens: 1 } });
  const cases: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['text', msg([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], 'end_turn'), { role: 'assistant', content: 'ab', refusal: null }, 'stop'],
    ['stop_sequence', msg([{ type: 'text', text: 'a' }], 'stop_sequence'), { content: 'a' }, 'stop'],
    ['max_tokens', msg([{ type: 'text', text: 'a' }], 'max_tokens'), { content: 'a' }, 'length'],
    ['refusal', msg([], 'refusal'), { content: '' }, 'content_filter'],
    ['tool_use, content null', msg([{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }], 'tool_use'), { content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, 'tool_calls'],
    ['thinking as reasoning_content', msg([{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'text', text: 'a' }], 'end_turn'), { content: 'a', reasoning_content: 'hm' }, 'stop'],
  ];
  it.each(cases)('%s', (_, input, message, finish) => {
    const r = messagesToChatAnswer(input);
    expect(r.ok && r.value).toMatchObject({ id: 'msg_1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } } });
  });
});

describe('the stream, event by event', () => {
  const ev = (type: string, value: Record<string, unknown> = {}) => ({ name: type, data: JSON.stringify({ type, ...value }) });
  const run = (includeUsage: boolean, events: { name: string; data: string }[]) => {
    const s = new MessagesToChatStream(includeUsage);
    return { per: events.map((e) => readEvents(s.event(e)).map((x) => (x.data === '[DONE]' ? '[DONE]' : JSON.parse(x.data)))), end: s.end() };
  };
  const start = ev('message_start', { message: { id: 'msg_1', model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } });

  it('text, the finish reason at message_delta, usage then [DONE] at message_stop', () => {
    const { per, end } = run(true, [start, ev('ping'), ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } }), ev('content_block_stop', { index: 0 }), ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }), ev('message_stop')]);
    expect(per[0]![0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(per[0]![0]).toMatchObject({ id: 'msg_1', object: 'chat.completion.chunk', model: 'm' });
    expect([per[1], per[2], per[4]]).toEqual([[], [], []]);
    expect(per[3]![0].choices[0].delta).toEqual({ content: 'hi' });
    expect(per[5]![0].choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(per[6]![0]).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } });
    expect(per[6]![1]).toBe('[DONE]');
    expect(end).toBe('');
  });

  it('two tool_use blocks: tool call indexes from 0, arguments as they come', () => {
    const { per } = run(false, [
      start,
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 't2', name: 'g', input: {} } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } }),
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 } }),
      ev('message_stop'),
    ]);
    expect(per[1]![0].choices[0].delta).toEqual({ tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] });
    expect(per[2]![0].choices[0].delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] });
    expect(per[3]![0].choices[0].delta.tool_calls[0]).toMatchObject({ index: 1, id: 't2' });
    expect(per[4]![0].choices[0].delta).toEqual({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] });
    expect(per[5]![0].choices[0].finish_reason).toBe('tool_calls');
    expect(per[6]).toEqual(['[DONE]']);
  });

  it('an end before message_stop is a cut (null); an error event becomes an error chunk, then nothing', () => {
    expect(run(false, [start, ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'x' } })]).end).toBeNull();
    const { per, end } = run(false, [start, ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }), ev('message_stop')]);
    expect(per[1]![0].error).toMatchObject({ type: 'upstream_error', code: 'upstream_stream_error' });
    expect(per[1]![0].error.message).toContain('Overloaded');
    expect(per[2]).toEqual([]);
    expect(end).toBe('');
  });
});
