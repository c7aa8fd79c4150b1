/** Tokens a provider reported for one request. */
export interface Usage {
  input: number | null;
  output: number | null;
}

// Copies kept of a plain JSON answer to read its usage from, at most; longer ones go unread.
const MAX_JSON_BYTES = 1024 * 1024;
// The longest unfinished line carried from one chunk to the next of an event stream.
const MAX_LINE_BYTES = 256 * 1024;
const USAGE = Buffer.from('"usage"');

/**
 * Reads the token counts out of an answer as it passes, without holding it back:
 * the whole body of a JSON answer (bounded), or, for an event stream, only the
 * lines that mention "usage" — OpenAI's last chat chunk, the Responses API's
 * `response.completed`, Anthropic's `message_start` and `message_delta`.
 */
export function createUsageReader(eventStream: boolean): { chunk(c: Buffer): void; result(): Usage } {
  const usage: Usage = { input: null, output: null };
  const json: Buffer[] = [];
  let size = 0;
  let carry: Buffer | null = null;

  const take = (text: string): void => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    const o = value as { usage?: unknown; response?: { usage?: unknown }; message?: { usage?: unknown } } | null;
    const u = (o?.usage ?? o?.response?.usage ?? o?.message?.usage) as Record<string, unknown> | null | undefined;
    if (typeof u !== 'object' || u === null) return;
    const input = u.prompt_tokens ?? u.input_tokens;
    const output = u.completion_tokens ?? u.output_tokens;
    if (typeof input === 'number') usage.input = input;
    if (typeof output === 'number') usage.output = output;
  };

  return {
    chunk(c) {
      if (!eventStream) {
        size += c.length;
        if (size <= MAX_JSON_BYTES) json.push(c);
        return;
      }
      const buf = carry === null ? c : Buffer.concat([carry, c]);
      const nl = buf.lastIndexOf(10);
      carry = nl === buf.length - 1 ? null : buf.subarray(nl + 1);
      if (carry !== null && carry.length > MAX_LINE_BYTES) carry = null;
      if (nl === -1) return;
      const usageAt = buf.indexOf(USAGE);
      if (usageAt === -1 || usageAt > nl) return;
      for (const line of buf.subarray(0, nl).toString('utf8').split('\n')) {
        if (line.startsWith('data:') && line.includes('"usage"')) take(line.slice(5).trim());
      }
    },
    result() {
      if (!eventStream && json.length > 0 && size <= MAX_JSON_BYTES) {
        const body = Buffer.concat(json);
        if (body.includes(USAGE)) take(body.toString('utf8'));
        json.length = 0;
      }
      return usage;
    },
  };
}
