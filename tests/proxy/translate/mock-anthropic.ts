/**
 * A Messages server that answers as Anthropic's API does (checked against the Anthropic
 * SDK in mock-anthropic.test.ts): `/v1/messages` requires its key (`x-api-key` or Bearer),
 * `anthropic-version` and `max_tokens` (400 in Anthropic's error shape otherwise) and
 * refuses two consecutive turns of one role; answers whole or as named events
 * (message_start, content_block_start/delta/stop with text_delta and input_json_delta,
 * ping, message_delta, message_stop). What it answers follows the last turn:
 *
 * - a user turn and tools: a tool_use of the first tool (model `parallel`: of every tool);
 * - a user turn of tool results: "the tool said: <first result>";
 * - else `hello from claude`, or up to a stop sequence.
 *
 * Model `cut` ends its stream in the middle; `overloaded` answers 529.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockAnthropic {
  baseUrl: string;
  received: { url: string; headers: http.IncomingHttpHeaders; json: any }[];
  close(): Promise<void>;
}

export const MOCK_ANTHROPIC_KEY = 'sk-ant-upstream-0123456789';
const TEXT = 'hello from claude';

export async function startMockAnthropic(): Promise<MockAnthropic> {
  const received: MockAnthropic['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let json: any = null;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // Answered below.
      }
      received.push({ url: req.url ?? '', headers: req.headers, json });
      // The API takes its key as x-api-key, or as a Bearer token (which this SDK sends).
      const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
      if (key !== MOCK_ANTHROPIC_KEY) return error(res, 401, 'authentication_error', 'invalid x-api-key');
      if (req.headers['anthropic-version'] === undefined) return error(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      if (req.url !== '/v1/messages') return error(res, 404, 'not_found_error', 'Not Found');
      if (json === null) return error(res, 400, 'invalid_request_error', 'body is not JSON');
      if (typeof json.max_tokens !== 'number') return error(res, 400, 'invalid_request_error', 'max_tokens: Field required');
      if (json.model === 'overloaded') return error(res, 529, 'overloaded_error', 'Overloaded');
      const roles: string[] = (json.messages ?? []).map((m: any) => m.role);
      if (roles.some((r, i) => i > 0 && r === roles[i - 1])) return error(res, 400, 'invalid_request_error', 'messages: roles must alternate');
      answer(json, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function error(res: http.ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_mock' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

function content(body: any): { blocks: any[]; stop: string; sequence: string | null } {
  const last = body.messages[body.messages.length - 1];
  const tools: any[] = body.tools ?? [];
  const blocks: any[] = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
  const result = blocks.find((b) => b.type === 'tool_result');
  if (result !== undefined) {
    const text = typeof result.content === 'string' ? result.content : result.content.map((b: any) => b.text).join('');
    return { blocks: [{ type: 'text', text: `the tool said: ${text}` }], stop: 'end_turn', sequence: null };
  }
  if (tools.length > 0 && body.tool_choice?.type !== 'none') {
    const use = body.model === 'parallel' ? tools : tools.slice(0, 1);
    return { blocks: use.map((t, i) => ({ type: 'tool_use', id: `toolu_0${i}${body.messages.length}`, name: t.name, input: { city: i === 0 ? 'Paris' : 'Oslo' } })), stop: 'tool_use', sequence: null };
  }
  for (const s of body.stop_sequences ?? []) {
    const at = TEXT.indexOf(s);
    if (at !== -1) return { blocks: [{ type: 'text', text: TEXT.slice(0, at) }], stop: 'stop_sequence', sequence: s };
  }
  if (body.max_tokens < 3) return { blocks: [{ type: 'text', text: 'hello' }], stop: 'max_tokens', sequence: null };
  return { blocks: [{ type: 'text', text: TEXT }], stop: 'end_turn', sequence: null };
}

function answer(body: any, res: http.ServerResponse): void {
  const c = content(body);
  const usage = { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 8, output_tokens: 6 };
  const message = { id: 'msg_01mock', type: 'message', role: 'assistant', model: body.model, content: c.blocks, stop_reason: c.stop, stop_sequence: c.sequence, usage };
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    return;
  }
  const ev = (type: string, value: any) => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;
  const events = [ev('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }), ev('ping', {})];
  c.blocks.forEach((b, index) => {
    if (b.type === 'text') {
      events.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const w of b.text.split(/(?= )/)) events.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text: w } }));
    } else {
      events.push(ev('content_block_start', { index, content_block: { ...b, input: {} } }));
      const json = JSON.stringify(b.input);
      events.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }));
      events.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) } }));
      events.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(5) } }));
    }
    events.push(ev('content_block_stop', { index }));
  });
  if (body.model === 'cut') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(events.slice(0, 4).join(''));
    setTimeout(() => res.destroy(), 5);
    return;
  }
  events.push(ev('message_delta', { delta: { stop_reason: c.stop, stop_sequence: c.sequence }, usage: { output_tokens: 6 } }), ev('message_stop', {}));
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (i === events.length) return void res.end();
    res.write(events[i++]);
    setImmediate(next);
  };
  next();
}
