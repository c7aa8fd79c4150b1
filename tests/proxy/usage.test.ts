import { describe, expect, it } from 'vitest';
import { createUsageReader } from '../../src/proxy/usage.js';

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
