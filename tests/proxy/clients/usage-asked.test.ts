// Usage on every answer (SPEC §9b), in pure units: the request body that asks a provider
// for a stream's usage, the events that keep it from a client that did not ask, the
// estimate for a provider that reports none, and the rate headers' formats.
import { describe, expect, it } from 'vitest';
import { askingUsage } from '../../../src/proxy/relay/usage-request.js';
import { withoutUsage } from '../../../src/proxy/relay/usage-strip.js';
import { membersOf } from '../../../src/proxy/relay/json-members.js';
import { eventTokens, promptTokens } from '../../../src/proxy/observe/token-estimate.js';
import { createUsageReader } from '../../../src/proxy/observe/usage.js';
import { ClientLimiter, goDuration } from '../../../src/proxy/clients/limiter.js';
import type { ClientRule } from '../../../src/proxy/clients/rules.js';

const ask = (body: string): string | null => askingUsage(Buffer.from(body))?.toString('utf8') ?? null;

describe('asking the provider for a stream\'s usage', () => {
  it.each<[string, string, string | null]>([
    ['no stream_options: added after the last member', '{"model":"m","stream":true,"messages":[]}', '{"model":"m","stream":true,"messages":[],"stream_options":{"include_usage":true}}'],
    ['spacing and a trailing newline stay', '{ "model" : "m",\n  "stream" : true }\n', '{ "model" : "m",\n  "stream" : true,"stream_options":{"include_usage":true} }\n'],
    ['include_usage false is made true', '{"model":"m","stream":true,"stream_options":{"include_usage":false}}', '{"model":"m","stream":true,"stream_options":{"include_usage":true}}'],
    ['other stream options are kept', '{"stream":true,"stream_options":{"continuous_usage_stats":false},"model":"m"}', '{"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":false},"model":"m"}'],
    ['empty stream_options', '{"model":"m","stream":true,"stream_options":{ }}', '{"model":"m","stream":true,"stream_options":{"include_usage":true}}'],
    ['stream_options null', '{"model":"m","stream":true,"stream_options":null}', '{"model":"m","stream":true,"stream_options":{"include_usage":true}}'],
    ['every duplicate stream_options asks', '{"stream":true,"stream_options":{"include_usage":true},"stream_options":{}}', '{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"include_usage":true}}'],
    ['the client asked already: nothing to add', '{"model":"m","stream":true,"stream_options":{"include_usage":true}}', null],
    ['not a stream', '{"model":"m","messages":[]}', null],
    ['stream false', '{"model":"m","stream":false}', null],
    ['the last stream wins, as JSON.parse reads it', '{"stream":true,"stream":false}', null],
    ['a stream_options the provider must refuse is left to it', '{"stream":true,"stream_options":"yes"}', null],
    ['"stream" inside a string or a nested object is not the member', '{"model":"m","messages":[{"role":"user","content":"\\"stream\\":true"}],"meta":{"stream":true}}', null],
  ])('%s', (_, body, expected) => {
    const out = ask(body);
    expect(out).toBe(expected);
    if (out !== null) expect((JSON.parse(out) as { stream_options: unknown }).stream_options).toMatchObject({ include_usage: true });
  });

  it('leaves every other byte as the client sent it: integers above 2^53, escapes, key order, non-ASCII text', () => {
    const body = '{"seed":12345678901234567890,"model":"m","messages":[{"role":"user","content":"h\\u00e9 \\"x\\" → ünïcode"}],"stream":true,"logit_bias":{"50256":-100}}';
    expect(ask(body)).toBe(`${body.slice(0, -1)},"stream_options":{"include_usage":true}}`);
  });

  it('reads members as JSON.parse names them (escaped keys), and says null for what is not an object', () => {
    const b = Buffer.from('{"str\\u0065am":true,"a":[1,{"b":"}"}]}');
    expect(membersOf(b)?.map((m) => m.name)).toEqual(['stream', 'a']);
    expect(ask('{"str\\u0065am":true}')).toBe('{"str\\u0065am":true,"stream_options":{"include_usage":true}}');
    for (const bad of ['[1,2]', '{"a":', '{"a" 1}', '"x"', '{"a":"unterminated}']) expect(membersOf(Buffer.from(bad))).toBeNull();
  });
});

const strip = (text: string): string => withoutUsage(Buffer.from(text)).toString('utf8');
const chunk = (extra: string): string => `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]${extra}}\n\n`;

describe('keeping from a client the usage it did not ask for', () => {
  it('leaves out the usage chunk and cuts "usage": null from the others, every other byte as it came', () => {
    const stream = `${chunk(',"usage":null')}${chunk(',"usage":null')}data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}}\n\ndata: [DONE]\n\n`;
    expect(strip(stream)).toBe(`${chunk('')}${chunk('')}data: [DONE]\n\n`);
  });

  it('cuts counts sent beside the last choice, keeping the choice; the first member or the only one too', () => {
    expect(strip('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\n')).toBe('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
    expect(strip('data: {"usage":null, "id":"c","choices":[{"delta":{}}]}\n\n')).toBe('data: {"id":"c","choices":[{"delta":{}}]}\n\n');
    expect(strip('data:{"usage":null}\n\n')).toBe('data:{}\n\n');
    // A usage chunk without choices at all (the openai client would fail on it) goes too.
    expect(strip('data: {"id":"c","usage":{"prompt_tokens":1}}\n\ndata: [DONE]\n\n')).toBe('data: [DONE]\n\n');
  });

  it('keeps the word where it is not the chunk\'s member: in text, in a nested object, in data that is not JSON', () => {
    const same = [
      'data: {"choices":[{"index":0,"delta":{"content":"the \\"usage\\": {} field"}}]}\n\n',
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{\\"usage\\":1}"}}]}}],"x":{"usage":{"a":1}}}\n\n',
      'data: not json "usage"\n\n',
      ': a comment "usage"\n\n',
    ];
    for (const s of same) expect(strip(s)).toBe(s);
    const text = Buffer.from(same.join(''));
    expect(withoutUsage(text)).toBe(text);
  });

  it('reads CRLF and CR line ends, events with an event: line, and events after a dropped one', () => {
    const crlf = 'event: x\r\ndata: {"choices":[],"usage":{"prompt_tokens":2}}\r\n\r\ndata: {"choices":[{"delta":{}}],"usage":null}\r\n\r\ndata: [DONE]\r\n\r\n';
    expect(strip(crlf)).toBe('data: {"choices":[{"delta":{}}]}\r\n\r\ndata: [DONE]\r\n\r\n');
    expect(strip('data: {"choices":[],"usage":{"prompt_tokens":2}}\r\rdata: [DONE]\r\r')).toBe('data: [DONE]\r\r');
    expect(strip('data: {"choices":[],"usage":{"prompt_tokens":2}}\n\n').length).toBe(0);
  });
});

describe('the estimate for a provider that reports no usage', () => {
  it('is a token per event, and a token per 4 bytes an event has beyond 256; [DONE] is no event', () => {
    expect(eventTokens(100)).toBe(1);
    expect(eventTokens(256)).toBe(1);
    expect(eventTokens(257)).toBe(2);
    expect(eventTokens(256 + 4000)).toBe(1001);
    expect(promptTokens(4001)).toBe(1001);
    const events = [chunk(''), chunk(''), `data: {"choices":[{"delta":{"content":"${'x'.repeat(1000)}"}}]}\n\n`, 'data: [DONE]\n\n'];
    const [small = '', , big = ''] = events;
    const expected = eventTokens(small.length) * 2 + eventTokens(big.length);
    expect(expected).toBeGreaterThan(200);
    // However the bytes are cut into pieces.
    for (const size of [1, 7, 64, 10_000]) {
      const r = createUsageReader(true, true);
      const all = events.join('');
      for (let i = 0; i < all.length; i += size) r.chunk(Buffer.from(all.slice(i, i + size)));
      expect(r.answerTokens()).toBe(expected);
      expect(r.result()).toEqual({ input: null, output: null });
    }
    // Not metered: nothing is measured.
    const plain = createUsageReader(true);
    plain.chunk(Buffer.from(events.join('')));
    expect(plain.answerTokens()).toBe(0);
    const answer = `{"choices":[{"message":{"content":"${'y'.repeat(2000)}"}}]}`;
    const json = createUsageReader(false, true);
    json.chunk(Buffer.from(answer));
    expect(json.answerTokens()).toBe(eventTokens(answer.length));
    expect(json.answerTokens()).toBe(1 + Math.ceil((answer.length - 256) / 4));
  });
});

const rule = (over: Partial<ClientRule>): ClientRule => ({ name: 'c', digest: null, models: null, matchers: null, rpm: null, tpm: null, maxConcurrent: null, ...over });

describe('rate headers', () => {
  it('write the reset as Go (and OpenAI) write a duration', () => {
    expect([0, -5, 0.4, 250, 999.2, 1000, 1500, 30_000, 59_999, 60_000, 90_951].map(goDuration)).toEqual(['0s', '0s', '1ms', '250ms', '1s', '1s', '1.5s', '30s', '59.999s', '1m0s', '1m30.951s']);
  });

  it('are OpenAI\'s for every client with limits, and Anthropic\'s too at its endpoints, the reset there an RFC 3339 time', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const l = new ClientLimiter(() => now);
    const r = rule({ rpm: 10, tpm: 1000 });
    expect(l.take(r)).toBeNull();
    l.release(r, 400);
    now += 15_500;
    expect(Object.fromEntries(l.headers(r))).toEqual({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '9',
      'x-ratelimit-reset-requests': '44.5s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '600',
      'x-ratelimit-reset-tokens': '44.5s',
    });
    expect(Object.fromEntries(l.headers(r, 'anthropic'))).toMatchObject({
      'x-ratelimit-remaining-tokens': '600',
      'anthropic-ratelimit-requests-limit': '10',
      'anthropic-ratelimit-requests-remaining': '9',
      'anthropic-ratelimit-requests-reset': '2026-01-01T12:01:00Z',
      'anthropic-ratelimit-tokens-limit': '1000',
      'anthropic-ratelimit-tokens-remaining': '600',
      'anthropic-ratelimit-tokens-reset': '2026-01-01T12:01:00Z',
    });
    expect(l.headers(rule({ maxConcurrent: 2 }), 'anthropic')).toEqual([]);
    expect(Object.fromEntries(l.headers(rule({ name: 'fresh', tpm: 5 })))).toEqual({ 'x-ratelimit-limit-tokens': '5', 'x-ratelimit-remaining-tokens': '5', 'x-ratelimit-reset-tokens': '0s' });
  });
});
