import { describe, expect, it } from 'vitest';
import { createUsageReader } from '../../../src/proxy/observe/usage.js';

const read = (stream: boolean, ...pieces: string[]) => {
  const r = createUsageReader(stream);
  for (const p of pieces) r.chunk(Buffer.from(p));
  return r.result();
};

describe('createUsageReader', () => {
  it('reads OpenAI and Anthropic JSON answers (the last usage object, whatever comes after it)', () => {
    expect(read(false, '{"id":"x","usage":{"prompt_tokens":3,', '"completion_tokens":4,"total_tokens":7}}')).toEqual({ input: 3, output: 4 });
    expect(read(false, '{"usage" : {"input_tokens":5,"output_tokens":6,"cache":{"a":1}},"stop_reason":"end_turn"}')).toEqual({ input: 5, output: 6 });
    expect(read(false, '{"choices":[{"message":{"content":"say \\"usage\\": {\\"prompt_tokens\\": 99}"}}]}')).toEqual({ input: null, output: null });
  });

  it('reads the usage of a JSON answer over 1 MiB, at its end or near its start, whatever the pieces', () => {
    const data = JSON.stringify(Array.from({ length: 3500 }, (_, i) => ({ object: 'embedding', index: i, embedding: Array(60).fill(0.0123456) })));
    expect(data.length).toBeGreaterThan(2 * 1024 * 1024);
    const atEnd = `{"object":"list","data":${data},"model":"m","usage":{"prompt_tokens":1234,"total_tokens":1234}}`;
    const atStart = `{"object":"list","model":"m","usage":{"prompt_tokens":77,"total_tokens":77},"data":${data}}`;
    const pieces = (text: string, size: number): string[] => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
    for (const size of [1000, 16 * 1024, 65_536, 300_000, atEnd.length]) {
      expect(read(false, ...pieces(atEnd, size))).toEqual({ input: 1234, output: null });
      expect(read(false, ...pieces(atStart, size))).toEqual({ input: 77, output: null });
    }
    expect(read(false, ...pieces(`{"data":${data}}`, 65_536))).toEqual({ input: null, output: null });
  });

  it('reads streams line by line, lines split across chunks, later counts replacing earlier ones', () => {
    const anthropic = [
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_',
      'tokens":6}}\n\n',
    ];
    expect(read(true, ...anthropic)).toEqual({ input: 5, output: 6 });
    expect(read(true, 'data: {"choices":[],"usage":null}\n\n', 'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4}}\n\ndata: [DONE]\n\n')).toEqual({ input: 7, output: 4 });
    expect(read(true, 'data: {"choices":[{"delta":{"content":"no counts"}}]}\n\n')).toEqual({ input: null, output: null });
  });
});

describe('the usage reader against JSON.parse', () => {
  // What the reader must agree with: the usage object parsed, then read as `take` does.
  const reference = (usage: string): { input: number | null; output: number | null } => {
    let u: Record<string, unknown> | null;
    try {
      u = JSON.parse(usage) as Record<string, unknown> | null;
    } catch {
      // Not JSON: no counts.
      return { input: null, output: null };
    }
    if (u === null || typeof u !== 'object') return { input: null, output: null };
    const input = u.prompt_tokens ?? u.input_tokens;
    const output = u.completion_tokens ?? u.output_tokens;
    return { input: typeof input === 'number' ? input : null, output: typeof output === 'number' ? output : null };
  };
  const objects = [
    '{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}',
    '{ "prompt_tokens" : 12 ,\n  "completion_tokens":\t0 }',
    '{"input_tokens":5,"output_tokens":6,"cache_creation":{"ephemeral_5m_input_tokens":9,"input_tokens":77}}',
    '{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":0,"prompt_tokens":50},"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}',
    '{"input_tokens":5,"prompt_tokens":8}',
    '{"prompt_tokens":null,"input_tokens":4,"completion_tokens":null}',
    '{"prompt_tokens":"5","input_tokens":4,"output_tokens":2}',
    '{"prompt_tokens":2.5,"completion_tokens":1e3}',
    '{"prompt_tokens":-1,"completion_tokens":3}',
    '{"prompt_tokens":12345678901234567890,"completion_tokens":3}',
    '{"prompt\\u005ftokens":6,"output_tokens":1}',
    '{"prompt_tokens":3,"prompt_tokens":4}',
    '{"note":"prompt_tokens","prompt_tokens":9,"list":[{"completion_tokens":1}],"completion_tokens":2}',
    '{"a":"x\\"prompt_tokens\\":1","completion_tokens":5}',
    '{"prompt_tokens":{"n":1},"input_tokens":3}',
    '{"prompt_tokens":[1],"completion_tokens":[2]}',
    '{}',
    // The plain kind the reader takes without JSON.parse, and its edges.
    '{ }',
    '{\r\n "prompt_tokens" :\r\n 0 , "completion_tokens":10 }',
    '{"prompt_tokens":007,"completion_tokens":1}',
    '{"prompt_tokens":123456789012345,"completion_tokens":1234567890123456}',
    '{"Prompt_Tokens":3,"PROMPT_TOKENS":4,"prompt_tokens":5}',
    '{"prompt-tokens":3,"completion_tokens":2}',
    '{"input_tokens":{},"prompt_tokens":1}',
    '{"details":{"deeper":{"prompt_tokens":99}},"completion_tokens":4}',
    '{"prompt_tokens":1,}',
    '{"prompt_tokens":1 "completion_tokens":2}',
    '{"":1,"completion_tokens":2}',
    '{"prompt_tokens":true,"input_tokens":6}',
  ];
  it.each(objects)('reads %s as JSON.parse does', (usage) => {
    expect(read(false, `{"id":"x","usage":${usage}}`)).toEqual(reference(usage));
    expect(read(true, `data: {"usage":${usage.replaceAll('\n', ' ')}}\n\n`)).toEqual(reference(usage.replaceAll('\n', ' ')));
  });
});
