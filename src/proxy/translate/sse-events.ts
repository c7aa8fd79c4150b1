/**
 * Whole server-sent events (as sse-frames.ts cuts them) read into their name and data,
 * for the stream translations, which work on events rather than bytes. Comments and
 * fields other than `event` and `data` are left out (`id`, `retry`: the proxy's
 * streams are not resumed).
 */

export interface SseEvent {
  /** The `event:` field, or null (OpenAI's streams name none). */
  name: string | null;
  /** The `data:` lines joined by line feeds. */
  data: string;
}

export function readEvents(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  let name: string | null = null;
  let data: string[] | null = null;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data !== null) out.push({ name, data: data.join('\n') });
      name = null;
      data = null;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') (data ??= []).push(value);
    else if (field === 'event') name = value;
  }
  if (data !== null) out.push({ name, data: data.join('\n') });
  return out;
}

/** An event as Anthropic's API writes them: named, its `type` repeated in the data. */
export const namedEvent = (type: string, value: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

/** An event as OpenAI's API writes them: data only. */
export const dataEvent = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
