// Limits hold on streams (SPEC §9b): a client's `tpm` counts the tokens of every answer,
// streamed or not, translated or not, on chat, completions, responses, messages and
// embeddings; the proxy asks an OpenAI-format provider for a stream's usage when the
// client did not, and keeps it from the client; a provider that reports none is
// estimated. Every answer to a limited client carries the rate headers. Real HTTP, the
// official openai and @anthropic-ai/sdk clients, and an upstream that reports usage as
// OpenAI's and Anthropic's APIs do.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { observeRequest } from '../../../src/proxy/observe/request-record.js';
import { eventTokens, promptTokens } from '../../../src/proxy/observe/token-estimate.js';
import { call, chat, eventually, open, startHarness, type Harness } from '../harness.js';

const METERED = 'sk-metered-0123456789';
const RPM_ONLY = 'sk-rpm-only-0123456789';
const CONCURRENT = 'sk-concurrent-0123456789';
const SHARED = 'sk-shared-0123456789';
const TPM = 3000;

interface Seen {
  url: string;
  bytes: Buffer;
  json: Record<string, any>;
  /** The body the upstream wrote, event by event (one piece for JSON). */
  wrote: string[];
}

/**
 * An upstream that reports usage as the real APIs do. The model names the counts:
 * `n<in>-<out>` reports them; `silent` reports none, asked or not; `hang-after-one`
 * streams one chunk and then nothing. Chat and completions streams carry usage only
 * when asked (`stream_options.include_usage`), and then, as OpenAI's API does,
 * `"usage": null` on every other chunk and a last chunk with no choices.
 */
function startCountingUpstream(): Promise<{ baseUrl: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const json = JSON.parse(bytes.toString('utf8')) as Record<string, any>;
      const s: Seen = { url: req.url ?? '', bytes, json, wrote: [] };
      seen.push(s);
      const model = String(json.model);
      const counts = /^n(\d+)-(\d+)$/.exec(model);
      const [input, output] = counts === null ? [null, null] : [Number(counts[1]), Number(counts[2])];
      const reports = input !== null;
      const stream = json.stream === true;
      const asked = json.stream_options?.include_usage === true;
      const path = (req.url ?? '').replace(/^\/v1/, '');
      const send = (list: string[]): void => {
        s.wrote.push(...list);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'anthropic-ratelimit-requests-limit': '4000' });
        let i = 0;
        const next = (): void => {
          if (res.destroyed) return;
          if (i === list.length) return void res.end();
          res.write(list[i++]);
          if (model !== 'hang-after-one') setTimeout(next, 1);
        };
        next();
      };
      const whole = (value: unknown): void => {
        const text = JSON.stringify(value);
        s.wrote.push(text);
        res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-limit-requests': '10000', 'anthropic-ratelimit-requests-limit': '4000' });
        res.end(text);
      };
      const data = (v: unknown): string => `data: ${JSON.stringify(v)}\n\n`;
      const named = (type: string, v: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...v })}\n\n`;
      const words = ['one ', 'two ', 'three'];
      const openaiUsage = reports ? { prompt_tokens: input, completion_tokens: output, total_tokens: (input ?? 0) + (output ?? 0) } : undefined;
      switch (path) {
        case '/chat/completions':
        case '/completions': {
          const chatLike = path === '/chat/completions';
          const base = { id: 'c-1', object: chatLike ? 'chat.completion.chunk' : 'text_completion', created: 1, model };
          const choice = (text: string, finish: string | null) => (chatLike ? { index: 0, delta: text === '' ? {} : { content: text }, logprobs: null, finish_reason: finish } : { index: 0, text, logprobs: null, finish_reason: finish });
          if (!stream) {
            return whole({ id: 'c-1', object: chatLike ? 'chat.completion' : 'text_completion', created: 1, model, choices: [chatLike ? { index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' } : { index: 0, text: words.join(''), finish_reason: 'stop' }], ...(openaiUsage === undefined ? {} : { usage: openaiUsage }) });
          }
          const withUsage = asked && reports;
          const list = [...words.map((w) => choice(w, null)), choice('', 'stop')].map((c) => data({ ...base, choices: [c], ...(withUsage ? { usage: null } : {}) }));
          if (withUsage) list.push(data({ ...base, choices: [], usage: openaiUsage }));
          list.push('data: [DONE]\n\n');
          return send(list);
        }
        case '/messages': {
          const usage = (u: Record<string, number>) => (reports ? { usage: u } : {});
          const message = { id: 'msg_1', type: 'message', role: 'assistant', model, content: [] as unknown[], stop_reason: null as string | null, stop_sequence: null, ...usage({ input_tokens: input ?? 0, output_tokens: 1 }) };
          if (!stream) return whole({ ...message, content: [{ type: 'text', text: words.join('') }], stop_reason: 'end_turn', ...usage({ input_tokens: input ?? 0, output_tokens: output ?? 0 }) });
          return send([
            named('message_start', { message }),
            named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
            ...words.map((text) => named('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
            named('content_block_stop', { index: 0 }),
            named('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, ...usage({ output_tokens: output ?? 0 }) }),
            named('message_stop', {}),
          ]);
        }
        case '/responses': {
          const response = (status: string) => ({ id: 'resp_1', object: 'response', created_at: 1, status, model, output: [], error: null, incomplete_details: null, instructions: null, metadata: {}, parallel_tool_calls: true, temperature: 1, top_p: 1, tool_choice: 'auto', tools: [], text: { format: { type: 'text' } }, usage: status === 'completed' && reports ? { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: (input ?? 0) + (output ?? 0) } : null });
          if (!stream) return whole(response('completed'));
          let n = 0;
          const ev = (type: string, v: Record<string, unknown>) => named(type, { sequence_number: n++, ...v });
          return send([ev('response.created', { response: response('in_progress') }), ...words.map((delta) => ev('response.output_text.delta', { item_id: 'm', output_index: 0, content_index: 0, delta, logprobs: [] })), ev('response.completed', { response: response('completed') })]);
        }
        case '/embeddings':
          return whole({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.25] }], model, ...(reports ? { usage: { prompt_tokens: input, total_tokens: input } } : {}) });
        default:
          res.writeHead(404).end();
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        seen,
        close: async () => {
          server.closeAllConnections();
          await new Promise((r) => server.close(r));
        },
      }),
    ),
  );
}

let up: Awaited<ReturnType<typeof startCountingUpstream>>;
let h: Harness;
let clock = 1_000_000_000;

beforeAll(async () => {
  up = await startCountingUpstream();
  h = await startHarness(
    () => ({
      api_keys: ['${SHARED_KEY}'],
      clients: {
        metered: { key: METERED, tpm: TPM },
        rpm_only: { key: RPM_ONLY, rpm: 50 },
        concurrent: { key: CONCURRENT, max_concurrent: 5 },
      },
      providers: { oa: { base_url: up.baseUrl }, an: { base_url: up.baseUrl, format: 'anthropic' } },
    }),
    { env: { SHARED_KEY: SHARED }, now: () => clock },
  );
});
afterAll(async () => {
  await h?.close();
  await up?.close();
});
// Each test starts with an empty window.
beforeEach(() => {
  clock += 120_000;
});

const messages = [{ role: 'user' as const, content: 'hi' }];
const openai = (apiKey = METERED) => new OpenAI({ baseURL: `${h.url}/v1`, apiKey, maxRetries: 0 });
const anthropic = (apiKey = METERED) => new Anthropic({ baseURL: h.url, apiKey, maxRetries: 0 });
const lastSeen = (): Seen => up.seen[up.seen.length - 1]!;

/** How many requests of the metered client have been recorded (its tokens count once its record is written). */
const records = () => h.logs.filter((l) => l.event === 'proxy_request' && l.client === 'metered').length;
async function settled(before: number, n = 1): Promise<void> {
  await eventually(() => records() >= before + n, 'the request\'s record');
}

/** The client's tokens left now, as the next answer's header says (a request whose answer counts 0). */
async function remaining(): Promise<number> {
  const before = records();
  const r = await call(h.url, { headers: { authorization: `Bearer ${METERED}` }, body: chat('oa:n0-0') });
  expect(r.status).toBe(200);
  await settled(before);
  return Number(r.headers['x-ratelimit-remaining-tokens']);
}

/** Calls `once` until the client is refused; resolves with the answers' count before the refusal and the refusal. */
async function untilRefused(once: () => Promise<unknown>): Promise<{ served: number; refusal: unknown }> {
  for (let served = 0; served < 5; served++) {
    const before = records();
    const refusal = await once().then(
      () => null,
      (e: unknown) => e,
    );
    if (refusal !== null) return { served, refusal };
    await settled(before);
  }
  throw new Error('never refused');
}

describe('streamed chat to an OpenAI-format provider, the client not asking for usage', () => {
  it('counts each answer\'s tokens, and the third is refused (tpm 3000, 2000 an answer), as unstreamed', async () => {
    const seenStreams: OpenAI.Chat.Completions.ChatCompletionChunk[][] = [];
    const streamed = await untilRefused(async () => {
      const stream = await openai().chat.completions.create({ model: 'oa:n1000-1000', messages, stream: true });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const c of stream) chunks.push(c);
      seenStreams.push(chunks);
    });
    expect(streamed.served).toBe(2);
    expect(streamed.refusal).toBeInstanceOf(OpenAI.RateLimitError);
    const refusal = streamed.refusal as InstanceType<typeof OpenAI.RateLimitError>;
    expect(refusal.code).toBe('rate_limit_tpm');
    expect(refusal.headers?.get('retry-after')).toBe('60');
    expect(refusal.headers?.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(refusal.headers?.get('x-ratelimit-limit-tokens')).toBe(String(TPM));
    // The client got the answer, and nothing of the usage it did not ask for.
    for (const chunks of seenStreams) {
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('one two three');
      for (const c of chunks) {
        expect(c).not.toHaveProperty('usage');
        expect(c.choices).toHaveLength(1);
      }
    }
    clock += 120_000;
    const plain = await untilRefused(() => openai().chat.completions.create({ model: 'oa:n1000-1000', messages }));
    expect(plain.served).toBe(2);
  });

  it('asks the provider for usage, the rest of the body byte for byte; the client\'s bytes carry no usage', async () => {
    const body = '{"model":"oa:n10-20", "messages":[{"role":"user","content":"h\\u00e9"}],"seed":12345678901234567890,"stream":true}';
    const r = await call(h.url, { headers: { authorization: `Bearer ${METERED}` }, body });
    expect(r.status).toBe(200);
    expect(lastSeen().bytes.toString('utf8')).toBe('{"model":"n10-20", "messages":[{"role":"user","content":"h\\u00e9"}],"seed":12345678901234567890,"stream":true,"stream_options":{"include_usage":true}}');
    // The provider sent usage on every chunk and a usage chunk: none of it reached the client.
    expect(lastSeen().wrote.join('')).toContain('"usage":null');
    expect(r.text).not.toContain('usage');
    expect(r.text).toBe(lastSeen().wrote.filter((e) => !e.includes('"choices":[]')).map((e) => e.replace(',"usage":null', '')).join(''));
    expect(await remaining()).toBe(TPM - 30);
  });

  it('include_usage false is made true for the provider, and the client still sees none', async () => {
    const r = await call(h.url, { headers: { authorization: `Bearer ${METERED}` }, body: chat('oa:n100-200', { stream: true, stream_options: { include_usage: false } }) });
    expect(r.status).toBe(200);
    expect(lastSeen().json.stream_options).toEqual({ include_usage: true });
    expect(r.text).not.toContain('usage');
    expect(r.text).toContain('data: [DONE]');
    expect(await remaining()).toBe(TPM - 300);
  });

  it('a client that asked gets the usage as the provider sent it, and its body goes unchanged', async () => {
    const body = chat('oa:n7-8', { stream: true, stream_options: { include_usage: true } });
    const stream = await openai().chat.completions.create({ model: 'oa:n7-8', messages, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 8 } });
    const r = await call(h.url, { headers: { authorization: `Bearer ${METERED}` }, body });
    expect(lastSeen().bytes.toString('utf8')).toBe(body.replace('oa:n7-8', 'n7-8'));
    expect(r.text).toBe(lastSeen().wrote.join(''));
    expect(await remaining()).toBe(TPM - 30);
  });

  it('a client without tpm: its body reaches the provider as sent, nothing asked, and it gets only the request headers', async () => {
    const body = chat('oa:n5-5', { stream: true });
    const r = await call(h.url, { headers: { authorization: `Bearer ${RPM_ONLY}` }, body });
    expect(r.status).toBe(200);
    expect(lastSeen().bytes.toString('utf8')).toBe(body.replace('oa:n5-5', 'n5-5'));
    expect(r.text).toBe(lastSeen().wrote.join(''));
    expect(r.headers['x-ratelimit-limit-requests']).toBe('50');
    expect(r.headers['x-ratelimit-remaining-requests']).toBe('49');
    expect(r.headers['x-ratelimit-reset-requests']).toBe('1m0s');
    expect(r.headers['x-ratelimit-limit-tokens']).toBeUndefined();
  });
});

describe('streams of every endpoint that reports usage count', () => {
  it('chat translated to an Anthropic-format provider (message_start and message_delta, 1000 + 1000)', async () => {
    const out: string[] = [];
    const r = await untilRefused(async () => {
      const stream = await openai().chat.completions.create({ model: 'an:n1000-1000', messages, max_tokens: 50, stream: true });
      for await (const c of stream) {
        expect(c).not.toHaveProperty('usage');
        out.push(c.choices[0]?.delta.content ?? '');
      }
    });
    expect(lastSeen().url).toBe('/v1/messages');
    expect(r.served).toBe(2);
    expect(r.refusal).toBeInstanceOf(OpenAI.RateLimitError);
    expect(out.join('')).toBe('one two threeone two three');
  });

  it('completions, the client not asking for usage', async () => {
    const r = await untilRefused(async () => {
      const stream = await openai().completions.create({ model: 'oa:n1000-1000', prompt: 'say', stream: true });
      for await (const c of stream) {
        expect(c).not.toHaveProperty('usage');
        expect(c.choices).toHaveLength(1);
      }
      expect(lastSeen().json.stream_options).toEqual({ include_usage: true });
    });
    expect(r.served).toBe(2);
  });

  it('responses (response.completed), passed through', async () => {
    const r = await untilRefused(async () => {
      const stream = await openai().responses.create({ model: 'oa:n1000-1000', input: 'hi', stream: true });
      const types: string[] = [];
      for await (const e of stream) types.push(e.type);
      expect(types.at(-1)).toBe('response.completed');
      // The Responses API always reports usage: nothing is added to its body.
      expect(lastSeen().json).not.toHaveProperty('stream_options');
    });
    expect(r.served).toBe(2);
  });

  it('messages to an Anthropic-format provider, and translated to an OpenAI-format one', async () => {
    for (const model of ['an:n1000-1000', 'oa:n1000-1000']) {
      clock += 120_000;
      const r = await untilRefused(async () => {
        const stream = anthropic().messages.stream({ model, max_tokens: 50, messages });
        const message = await stream.finalMessage();
        expect(message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toBe('one two three');
      });
      expect(lastSeen().url).toBe(model.startsWith('an') ? '/v1/messages' : '/v1/chat/completions');
      expect(r.served).toBe(2);
      expect(r.refusal).toBeInstanceOf(Anthropic.RateLimitError);
    }
  });

  it('embeddings, and unstreamed answers of each endpoint', async () => {
    const before = await remaining();
    await openai().embeddings.create({ model: 'oa:n40-0', input: 'hi', encoding_format: 'float' });
    await openai().completions.create({ model: 'oa:n1-2', prompt: 'say' });
    await openai().responses.create({ model: 'oa:n3-4', input: 'hi' });
    await anthropic().messages.create({ model: 'an:n5-6', max_tokens: 5, messages });
    await openai().chat.completions.create({ model: 'an:n7-8', messages, max_tokens: 5 });
    expect(await remaining()).toBe(before - 40 - 3 - 7 - 11 - 15);
  });
});

describe('a provider that reports no usage', () => {
  it('is estimated from the prompt\'s and the answer\'s bytes (docs/proxy.md), streamed or not', async () => {
    const start = await remaining();
    let expected = start;
    const estimate = (s: Seen): number => promptTokens(s.bytes.length) + s.wrote.filter((e) => e !== 'data: [DONE]\n\n').reduce((n, e) => n + eventTokens(e.length), 0);
    const long = [{ role: 'user' as const, content: 'x'.repeat(4000) }];
    const stream = await openai().chat.completions.create({ model: 'oa:silent', messages: long, stream: true });
    for await (const c of stream) expect(c).not.toHaveProperty('usage');
    expect(lastSeen().json.stream_options).toEqual({ include_usage: true });
    expected -= estimate(lastSeen());
    expect(await remaining()).toBe(expected);
    expect(start - expected).toBeGreaterThan(1000);
    await openai().chat.completions.create({ model: 'oa:silent', messages });
    expected -= estimate(lastSeen());
    expect(await remaining()).toBe(expected);
    // Anthropic's SDK would fail on a stream without usage; a plain client does not.
    const m = await call(h.url, { path: '/v1/messages', headers: { 'x-api-key': METERED }, body: JSON.stringify({ model: 'an:silent', max_tokens: 5, messages, stream: true }) });
    expect(m.text).toContain('event: message_stop');
    expected -= estimate(lastSeen());
    expect(await remaining()).toBe(expected);
    // The log keeps to what providers reported: no made-up tokens_in.
    const line = h.logs.filter((l) => l.event === 'proxy_request' && l.model === 'an:silent').at(-1);
    expect(line).toMatchObject({ status: 200 });
    expect(line).not.toHaveProperty('tokens_in');
  });

  it('a stream the client leaves counts what came of it', async () => {
    const start = await remaining();
    const before = records();
    const ex = open(h.url, chat('oa:hang-after-one', { stream: true }), { authorization: `Bearer ${METERED}` });
    await ex.until((t) => t.includes('one '));
    ex.abort();
    await settled(before);
    const s = lastSeen();
    expect(await remaining()).toBe(start - promptTokens(s.bytes.length) - eventTokens((s.wrote[0] ?? '').length));
  });
});

describe('rate headers', () => {
  const rateHeaders = (headers: http.IncomingHttpHeaders) => Object.keys(headers).filter((n) => n.startsWith('x-ratelimit-') || n.startsWith('anthropic-ratelimit-'));
  const GO_DURATION = /^(\d+ms|(\d+m)?\d+(\.\d+)?s)$/;

  it('on every answer to a limited client, streamed or not, 200 or 429, in OpenAI\'s formats', async () => {
    const as = (body: string) => call(h.url, { headers: { authorization: `Bearer ${METERED}` }, body });
    let before = records();
    const json = await as(chat('oa:n600-400'));
    expect(json.status).toBe(200);
    expect(json.headers).toMatchObject({ 'x-ratelimit-limit-tokens': '3000', 'x-ratelimit-remaining-tokens': '3000', 'x-ratelimit-reset-tokens': '0s' });
    // The provider's own (its key's, shared by every client) give way.
    expect(json.headers['x-ratelimit-limit-requests']).toBeUndefined();
    expect(json.headers['anthropic-ratelimit-requests-limit']).toBeUndefined();
    await settled(before);
    clock += 1500;
    before = records();
    const stream = await as(chat('oa:n1000-1000', { stream: true }));
    expect(stream.status).toBe(200);
    expect(stream.headers).toMatchObject({ 'x-ratelimit-remaining-tokens': '2000', 'x-ratelimit-reset-tokens': '58.5s' });
    await settled(before);
    clock += 500;
    const refused = await as(chat('oa:n1-1'));
    expect(refused.status).toBe(429);
    expect(refused.headers).toMatchObject({ 'retry-after': '58', 'x-ratelimit-limit-tokens': '3000', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '58s' });
    for (const r of [json, stream, refused]) expect(r.headers['x-ratelimit-reset-tokens']).toMatch(GO_DURATION);
  });

  it('Anthropic\'s too at /v1/messages, the provider\'s own giving way; OpenAI\'s at a 429 there', async () => {
    const { response } = await anthropic().messages.create({ model: 'an:n1500-1500', max_tokens: 5, messages }).withResponse();
    expect(response.headers.get('anthropic-ratelimit-tokens-limit')).toBe('3000');
    expect(response.headers.get('anthropic-ratelimit-tokens-remaining')).toBe('3000');
    expect(response.headers.get('anthropic-ratelimit-tokens-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(response.headers.get('x-ratelimit-remaining-tokens')).toBe('3000');
    expect(response.headers.get('anthropic-ratelimit-requests-limit')).toBeNull();
    await eventually(() => h.logs.some((l) => l.client === 'metered' && l.model === 'an:n1500-1500'), 'the record');
    const refused = await anthropic().messages.create({ model: 'an:n1-1', max_tokens: 5, messages }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const headers = (refused as InstanceType<typeof Anthropic.RateLimitError>).headers;
    expect(headers?.get('retry-after')).toBe('60');
    expect(headers?.get('anthropic-ratelimit-tokens-remaining')).toBe('0');
    expect(headers?.get('anthropic-ratelimit-tokens-reset')).toBe(new Date(Math.ceil((clock + 60_000) / 1000) * 1000).toISOString().replace('.000Z', 'Z'));
    expect(headers?.get('x-ratelimit-remaining-tokens')).toBe('0');
    // An OpenAI endpoint's answer has no Anthropic headers.
    clock += 120_000;
    const chatAnswer = await call(h.url, { headers: { authorization: `Bearer ${METERED}` }, body: chat('oa:n0-0') });
    expect(rateHeaders(chatAnswer.headers).sort()).toEqual(['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens']);
  });

  it('on translated answers too, streamed or not', async () => {
    const as = (path: string, body: Record<string, unknown>) => call(h.url, { path, headers: { authorization: `Bearer ${METERED}` }, body: JSON.stringify({ messages, max_tokens: 5, ...body }) });
    for (const stream of [true, false]) {
      const toAnthropic = await as('/v1/chat/completions', { model: 'an:n0-0', stream });
      expect(lastSeen().url).toBe('/v1/messages');
      expect(toAnthropic.headers).toMatchObject({ 'x-ratelimit-limit-tokens': '3000', 'x-ratelimit-remaining-tokens': '3000' });
      const toChat = await as('/v1/messages', { model: 'oa:n0-0', stream });
      expect(lastSeen().url).toBe('/v1/chat/completions');
      expect(toChat.headers).toMatchObject({ 'x-ratelimit-remaining-tokens': '3000', 'anthropic-ratelimit-tokens-remaining': '3000' });
      expect(rateHeaders(toChat.headers)).toHaveLength(6);
    }
  });

  it('none for clients without rpm or tpm, or with a shared key; the provider\'s own pass to them', async () => {
    for (const key of [CONCURRENT, SHARED]) {
      const r = await call(h.url, { headers: { authorization: `Bearer ${key}` }, body: chat('oa:n1-1', { stream: true }) });
      expect(r.status).toBe(200);
      expect(rateHeaders(r.headers)).toEqual(['anthropic-ratelimit-requests-limit']);
      // Nothing was asked on their behalf.
      expect(lastSeen().json).not.toHaveProperty('stream_options');
      const m = await call(h.url, { path: '/v1/messages', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'an:n1-1', max_tokens: 5, messages }) });
      expect(m.status).toBe(200);
      expect(rateHeaders(m.headers).sort()).toEqual(['anthropic-ratelimit-requests-limit', 'x-ratelimit-limit-requests']);
      expect(m.headers['anthropic-ratelimit-requests-limit']).toBe('4000');
    }
  });
});

describe('through the daemon\'s listener', () => {
  it('counts a stream the client did not ask usage of, keeps it from the client, and sends the headers', async () => {
    const d = await startHarness(() => ({ clients: { metered: { key: METERED, tpm: TPM } }, providers: { oa: { base_url: up.baseUrl } } }), { now: () => clock }, 'daemon');
    try {
      const as = (model: string) => call(d.url, { headers: { authorization: `Bearer ${METERED}` }, body: chat(model, { stream: true }) });
      const first = await as('oa:n1000-1000');
      expect(first.status).toBe(200);
      expect(first.headers['x-ratelimit-remaining-tokens']).toBe('3000');
      expect(first.text).not.toContain('usage');
      expect(lastSeen().json.stream_options).toEqual({ include_usage: true });
      await eventually(() => d.logs.some((l) => l.event === 'proxy_request' && l.client === 'metered'), 'the record');
      const second = await as('oa:n0-0');
      expect(second.headers['x-ratelimit-remaining-tokens']).toBe('1000');
    } finally {
      await d.close();
    }
  });
});

describe('the request\'s record', () => {
  /** What a metered request's record counts for an answer of `endpoint` with `body`. */
  async function countedFor(endpoint: string, body: string, status = 200): Promise<unknown> {
    let told: unknown = 'never';
    const server = http.createServer((req, res) => {
      const obs = observeRequest({ requestId: 'r', endpoint, res });
      obs.metered = true;
      obs.onEnd = (u) => (told = u);
      obs.sent(400);
      res.writeHead(status, { 'content-type': 'application/json' });
      obs.read(Buffer.from(body));
      obs.tap(Buffer.from(body));
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const r = await call(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { body: '{}' });
      expect(r.text).toBe(body);
      await eventually(() => told !== 'never', 'the record');
      return told;
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('counts reported usage; estimates a token endpoint\'s answer without it; not a stored response read again, nor an error', async () => {
    const withUsage = '{"id":"resp_1","usage":{"input_tokens":9,"output_tokens":4}}';
    expect(await countedFor('/responses', withUsage)).toEqual({ input: 9, output: 4 });
    expect(await countedFor('/rerank', '{"results":[],"usage":{"prompt_tokens":3}}')).toEqual({ input: 3, output: null });
    expect(await countedFor('/responses/{id}', withUsage)).toBeNull();
    expect(await countedFor('/responses/{id}/cancel', withUsage)).toBeNull();
    expect(await countedFor('/chat/completions', '{"choices":[]}')).toEqual({ input: promptTokens(400), output: eventTokens(14) });
    expect(await countedFor('/rerank', '{"results":[]}')).toEqual({ input: null, output: null });
    expect(await countedFor('/chat/completions', '{"error":{}}', 500)).toEqual({ input: null, output: null });
  });
});
