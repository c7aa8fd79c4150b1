/**
 * A chat-completion server that answers as vLLM's OpenAI-compatible server does
 * (checked against the `openai` client in mock-vllm.test.ts): `/v1/chat/completions`
 * plain and streamed (a first chunk with the role, content deltas, tool calls with
 * their id and name first and the arguments in pieces, `finish_reason` with vLLM's
 * `stop_reason`, the usage chunk when `stream_options.include_usage`), and `/tokenize`
 * at the server's root. What it does follows the last message:
 *
 * - a user message and tools: it calls the first tool (model `parallel`: every tool, two calls);
 * - a `tool` message: it answers with the tool's result in its text;
 * - else: `hello from vllm`, or up to a stop string of the request's `stop`.
 *
 * Models: `busy` answers 503; `cut` ends the stream in the middle of the answer (no finish_reason, no [DONE]);
 * `stall` sends its first chunk and then nothing (a test notes when the proxy hangs up: `closed`);
 * `echo` answers the last message's text; `reasoning` adds `reasoning_content`; `bad-tool-args` calls a tool with arguments that are not JSON.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockVllm {
  baseUrl: string;
  received: { url: string; headers: http.IncomingHttpHeaders; json: any; closed?: boolean }[];
  close(): Promise<void>;
}

const TEXT = 'hello from vllm';

export async function startMockVllm(): Promise<MockVllm> {
  const received: MockVllm['received'] = [];
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
      const record: MockVllm['received'][number] = { url: req.url ?? '', headers: req.headers, json };
      received.push(record);
      res.on('close', () => (record.closed = !res.writableFinished));
      if (json === null) return error(res, 400, 'body is not JSON');
      if (req.url === '/tokenize') return send(res, { count: 11, max_model_len: 4096, tokens: Array.from({ length: 11 }, (_, i) => i) });
      if (req.url !== '/v1/chat/completions') return error(res, 404, 'Not Found');
      if (!Array.isArray(json.messages)) return error(res, 400, 'messages: Field required');
      if (json.model === 'busy') return error(res, 503, 'the engine is busy');
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

function error(res: http.ServerResponse, status: number, message: string): void {
  // vLLM's error shape.
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'error', message, type: 'BadRequestError', param: null, code: status }));
}

function send(res: http.ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

interface Plan {
  reasoning: string | null;
  text: string;
  calls: { id: string; name: string; arguments: string }[];
  finish: 'stop' | 'tool_calls' | 'length';
  stopReason: string | null;
}

function plan(body: any): Plan {
  const model: string = body.model;
  const last = body.messages[body.messages.length - 1];
  const tools: any[] = body.tools ?? [];
  const reasoning = model === 'reasoning' ? 'the user greets me' : null;
  if (model === 'bad-tool-args') return { reasoning, text: '', calls: [{ id: 'chatcmpl-tool-bad', name: tools[0]?.function.name ?? 'f', arguments: '{"city": ' }], finish: 'tool_calls', stopReason: null };
  if (last?.role === 'user' && tools.length > 0 && body.tool_choice !== 'none') {
    const use = model === 'parallel' ? tools : tools.slice(0, 1);
    const calls = use.map((t, i) => ({ id: `chatcmpl-tool-${i}${body.messages.length}`, name: t.function.name, arguments: JSON.stringify({ city: i === 0 ? 'Paris' : 'Oslo' }) }));
    return { reasoning, text: '', calls, finish: 'tool_calls', stopReason: null };
  }
  if (model === 'echo') return { reasoning, text: String(last?.content), calls: [], finish: 'stop', stopReason: null };
  if (last?.role === 'tool') return { reasoning, text: `the tool said: ${last.content}`, calls: [], finish: 'stop', stopReason: null };
  const stops: string[] = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []);
  for (const s of stops) {
    const at = TEXT.indexOf(s);
    if (at !== -1) return { reasoning, text: TEXT.slice(0, at), calls: [], finish: 'stop', stopReason: s };
  }
  if (typeof body.max_tokens === 'number' && body.max_tokens < 3) return { reasoning, text: 'hello', calls: [], finish: 'length', stopReason: null };
  return { reasoning, text: TEXT, calls: [], finish: 'stop', stopReason: null };
}

const usage = { prompt_tokens: 21, completion_tokens: 5, total_tokens: 26, prompt_tokens_details: { cached_tokens: 16 } };

function answer(body: any, res: http.ServerResponse): void {
  const p = plan(body);
  const base = { id: 'chatcmpl-0123', created: 1, model: body.model };
  if (body.stream !== true) {
    const message: any = { role: 'assistant', content: p.calls.length > 0 ? null : p.text, tool_calls: p.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
    if (p.reasoning !== null) message.reasoning_content = p.reasoning;
    return send(res, { ...base, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: p.finish, stop_reason: p.stopReason }], usage });
  }
  const chunk = (delta: any, finish: string | null = null, extra: any = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, ...extra }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '' })];
  if (p.reasoning !== null) for (const w of p.reasoning.split(/(?= )/)) events.push(chunk({ reasoning_content: w }));
  for (const w of p.text.split(/(?= )/)) if (w !== '') events.push(chunk({ content: w }));
  p.calls.forEach((c, index) => {
    events.push(chunk({ tool_calls: [{ id: c.id, type: 'function', index, function: { name: c.name, arguments: '' } }] }));
    // vLLM's tool parsers send the arguments in pieces.
    const half = Math.ceil(c.arguments.length / 2);
    events.push(chunk({ tool_calls: [{ index, function: { arguments: c.arguments.slice(0, half) } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: c.arguments.slice(half) } }] }));
  });
  if (body.model === 'stall') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(events[0]);
    return;
  }
  if (body.model === 'cut') {
    // The server dies in the middle of the answer.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(events.slice(0, 3).join(''));
    setTimeout(() => res.destroy(), 5);
    return;
  }
  events.push(chunk({}, p.finish, { stop_reason: p.stopReason }));
  if (body.stream_options?.include_usage === true) events.push(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
  events.push('data: [DONE]\n\n');
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (i === events.length) return void res.end();
    res.write(events[i++]);
    setImmediate(next);
  };
  next();
}
