/**
 * What the mock upstream answers on the endpoints besides chat, and on chat when a
 * plain model is asked to stream, shaped like the real APIs' answers so that the
 * official clients parse them: OpenAI's Responses API (JSON, and its named event
 * stream ending in `response.completed`, no [DONE]), embeddings (float or base64, as
 * the `openai` client asks for base64 by default), legacy completions, and
 * Anthropic's Messages API (JSON, and its event stream with `event:` lines), and the
 * other JSON endpoints: moderations, image generation, speech (binary audio, or its
 * event stream), rerank and score; and the uploads of audio transcription and
 * translation (their text fields as `body`), in each `response_format`.
 *
 * Also, on any endpoint, `busy:<status>:<retry-after>[:<retry-after-ms>]`: an error in
 * the endpoint's family's shape with a `Retry-After` header (omitted when <retry-after>
 * is `-`), and `Retry-After-Ms` when given (OpenAI's API sends both).
 *
 * And `open-cors`: a chat answer with `Access-Control-Allow-Origin: *`, as Ollama sends.
 *
 * Returns false for model names it leaves to the chat mock (slow:, hang, error:, …).
 */
import type http from 'node:http';

const WORDS = ['hello ', 'from ', 'the ', 'mock'];
const TEXT = WORDS.join('');
/** What `/audio/speech` answers: every byte value, so that any re-encoding on the way shows. */
export const AUDIO = Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i));
const SPECIAL = new Set(['slow', 'hang', 'error', 'echo-key', 'stream', 'gated-stream', 'gated-head', 'stall-stream', 'die-stream', 'json-stall', 'cut-event', 'split-events', 'no-final-blank', 'gz']);

export function answerFormat(path: string, model: string, body: Record<string, unknown> | null, res: http.ServerResponse): boolean {
  const [kind, a, b, c] = model.split(':');
  const endpoint = path.replace(/^.*\/v1/, '');
  if (kind === 'busy') {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (b !== undefined && b !== '-') headers['retry-after'] = b;
    if (c !== undefined) headers['retry-after-ms'] = c;
    res.writeHead(Number(a), headers);
    res.end(JSON.stringify(endpoint === '/messages' ? { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } : { error: { message: 'busy', type: 'server_error', param: null, code: null } }));
    return true;
  }
  if (kind === 'open-cors') {
    // As Ollama answers: every origin allowed.
    res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true' });
    res.end(JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }] }));
    return true;
  }
  if (endpoint === '/responses/input_tokens') return json(res, { object: 'response.input_tokens', input_tokens: 7 });
  if (endpoint === '/responses/compact') return json(res, { id: responseId(model), object: 'response.compaction', created_at: 1, output: [{ type: 'compaction', id: 'cmp_1', encrypted_content: 'x' }], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } });
  if (endpoint.startsWith('/responses/')) return storedResponse(res, endpoint.slice('/responses/'.length), path);
  if (SPECIAL.has(kind ?? '')) return false;
  const stream = body?.stream === true;
  switch (endpoint) {
    case '/chat/completions':
      if (!stream) return false;
      return events(res, chatStream(model, (body?.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true));
    case '/responses':
      return stream ? events(res, responsesStream(model)) : json(res, responseObject(model, 'completed'));
    case '/embeddings':
      return json(res, embeddings(model, body));
    case '/completions':
      return stream ? events(res, completionStream(model)) : json(res, { id: 'cmpl-mock', object: 'text_completion', created: 1, model, choices: [{ text: TEXT, index: 0, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 } });
    case '/moderations':
      return json(res, { id: 'modr-mock', model, results: [{ flagged: false, categories: { violence: false }, category_scores: { violence: 0.001 }, category_applied_input_types: { violence: ['text'] } }] });
    case '/images/generations':
      return json(res, { created: 1, data: [{ b64_json: AUDIO.subarray(0, 64).toString('base64'), revised_prompt: String(body?.prompt ?? '') }], usage: { input_tokens: 3, output_tokens: 0, total_tokens: 3 } });
    case '/audio/speech':
      if (body?.stream_format === 'sse') {
        return events(res, [data({ type: 'speech.audio.delta', audio: AUDIO.subarray(0, 128).toString('base64') }), data({ type: 'speech.audio.delta', audio: AUDIO.subarray(128).toString('base64') }), data({ type: 'speech.audio.done', usage: { input_tokens: 4, output_tokens: 9, total_tokens: 13 } })]);
      }
      // Binary audio, not UTF-8: it must reach the client byte for byte.
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': AUDIO.length });
      res.end(AUDIO);
      return true;
    case '/rerank':
      // vLLM's (and Jina's) shape.
      return json(res, {
        id: 'rerank-mock',
        model,
        usage: { total_tokens: 7 },
        results: ((body?.documents as string[] | undefined) ?? []).map((text, index) => ({ index, document: { text }, relevance_score: 1 / (index + 1) })),
      });
    case '/score':
      return json(res, { id: 'score-mock', object: 'list', created: 1, model, data: [{ index: 0, object: 'score', score: 0.75 }], usage: { prompt_tokens: 5, total_tokens: 5, completion_tokens: 0 } });
    case '/audio/transcriptions':
    case '/audio/translations':
      return transcription(res, body);
    case '/messages/count_tokens':
      return json(res, { input_tokens: 5 });
    case '/messages':
      return stream ? events(res, messagesStream(model)) : json(res, message(model, TEXT, 'end_turn', 6));
    default:
      return false;
  }
}

function json(res: http.ServerResponse, value: unknown): true {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
  return true;
}

/** Writes the events a few milliseconds apart, as a model generating would. */
function events(res: http.ServerResponse, list: string[]): true {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (i === list.length) return void res.end();
    res.write(list[i++]);
    setTimeout(next, 2);
  };
  next();
  return true;
}

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
const named = (type: string, value: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

function chatStream(model: string, usage: boolean): string[] {
  const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model };
  const out = [data({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })];
  for (const w of WORDS) out.push(data({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] }));
  out.push(data({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  if (usage) out.push(data({ ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 } }));
  out.push('data: [DONE]\n\n');
  return out;
}

function completionStream(model: string): string[] {
  const base = { id: 'cmpl-mock', object: 'text_completion', created: 1, model };
  return [...WORDS.map((w) => data({ ...base, choices: [{ text: w, index: 0, logprobs: null, finish_reason: null }] })), data({ ...base, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }] }), 'data: [DONE]\n\n'];
}

const outputMessage = (text: string, status: string) => ({ type: 'message', id: 'msg_mock', status, role: 'assistant', content: text === '' ? [] : [{ type: 'output_text', text, annotations: [] }] });

/** A response's id names its model, so that a test can tell which provider stored it. */
const responseId = (model: string): string => `resp_${model.replace(/[^A-Za-z0-9]/g, '_')}`;

function responseObject(model: string, status: 'in_progress' | 'completed' | 'cancelled', id = responseId(model)) {
  const done = status === 'completed';
  return {
    id,
    object: 'response',
    created_at: 1,
    status,
    model,
    output: done ? [outputMessage(TEXT, 'completed')] : [],
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: 1,
    top_p: 1,
    tool_choice: 'auto',
    tools: [],
    text: { format: { type: 'text' } },
    usage: done ? { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 13 } : null,
  };
}

function responsesStream(model: string): string[] {
  let n = 0;
  const ev = (type: string, value: Record<string, unknown>): string => named(type, { sequence_number: n++, ...value });
  const ids = { item_id: 'msg_mock', output_index: 0, content_index: 0 };
  return [
    ev('response.created', { response: responseObject(model, 'in_progress') }),
    ev('response.in_progress', { response: responseObject(model, 'in_progress') }),
    ev('response.output_item.added', { output_index: 0, item: outputMessage('', 'in_progress') }),
    ev('response.content_part.added', { ...ids, part: { type: 'output_text', text: '', annotations: [] } }),
    ...WORDS.map((delta) => ev('response.output_text.delta', { ...ids, delta, logprobs: [] })),
    ev('response.output_text.done', { ...ids, text: TEXT, logprobs: [] }),
    ev('response.content_part.done', { ...ids, part: { type: 'output_text', text: TEXT, annotations: [] } }),
    ev('response.output_item.done', { output_index: 0, item: outputMessage(TEXT, 'completed') }),
    ev('response.completed', { response: responseObject(model, 'completed') }),
  ];
}

function embeddings(model: string, body: Record<string, unknown> | null) {
  const inputs = Array.isArray(body?.input) ? body.input : [body?.input];
  const vector = [0.5, -0.25, 0.125];
  const base64 = body?.encoding_format === 'base64';
  return {
    object: 'list',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector })),
    model,
    usage: { prompt_tokens: 2, total_tokens: 2 },
  };
}

function message(model: string, text: string, stop: string | null, outputTokens: number) {
  return { id: 'msg_mock', type: 'message', role: 'assistant', model, content: text === '' ? [] : [{ type: 'text', text }], stop_reason: stop, stop_sequence: null, usage: { input_tokens: 5, output_tokens: outputTokens } };
}

function messagesStream(model: string): string[] {
  return [
    named('message_start', { message: message(model, '', null, 1) }),
    named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    named('ping', {}),
    ...WORDS.map((text) => named('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
    named('content_block_stop', { index: 0 }),
    named('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } }),
    named('message_stop', {}),
  ];
}

/** A transcription in the `response_format` asked for, or its event stream (`stream=true`). */
function transcription(res: http.ServerResponse, body: Record<string, unknown> | null): true {
  if (body?.stream === true) {
    return events(res, [...WORDS.map((delta) => data({ type: 'transcript.text.delta', delta })), data({ type: 'transcript.text.done', text: TEXT })]);
  }
  switch (body?.response_format) {
    case 'text':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${TEXT}\n`);
      return true;
    case 'verbose_json':
      return json(res, { task: 'transcribe', language: String(body.language ?? 'english'), duration: 1.5, text: TEXT, segments: [{ id: 0, start: 0, end: 1.5, text: TEXT }] });
    default:
      return json(res, { text: TEXT, usage: { type: 'duration', seconds: 2 } });
  }
}

/**
 * The calls on a stored response, as OpenAI's API and vLLM answer them: the response
 * (as an event stream with `?stream=true`), its deletion, its cancellation, its input
 * items; an id the mock never made (not `resp_…`) is a 404.
 */
function storedResponse(res: http.ServerResponse, rest: string, url: string): true {
  const [id = '', sub = ''] = rest.split('?')[0]!.split('/');
  const method = res.req.method;
  if (!id.startsWith('resp_')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null } }));
    return true;
  }
  const model = id.slice('resp_'.length);
  if (sub === 'cancel' && method === 'POST') return json(res, responseObject(model, 'cancelled', id));
  if (sub === 'input_items' && method === 'GET') {
    return json(res, { object: 'list', data: [{ id: 'msg_in', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'hi' }] }], first_id: 'msg_in', last_id: 'msg_in', has_more: false });
  }
  if (sub === '' && method === 'DELETE') return json(res, { id, object: 'response', deleted: true });
  if (sub === '' && method === 'GET') {
    if (url.includes('stream=true')) return events(res, responsesStream(model).map((e) => e.replaceAll(responseId(model), id)));
    return json(res, responseObject(model, 'completed', id));
  }
  res.writeHead(405, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: 'method not allowed', type: 'invalid_request_error', param: null, code: null } }));
  return true;
}
