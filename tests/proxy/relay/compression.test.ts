/**
 * Providers that compress although the proxy asked for `accept-encoding: identity`:
 * the client gets plain bodies (no plain text ever lands inside a compressed one), and
 * the upstream key is blanked out of error bodies whatever their encoding.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, chat, open, startHarness, type Harness } from '../harness.js';

const UPSTREAM_KEY = 'sk-upstream-compressed-987654';
const events = (text: string): string[] =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));

describe('compressed answers', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base }, keyed: { base_url: base, api_key: '${UPSTREAM_KEY}' } } }), {
      env: { UPSTREAM_KEY },
    });
  });
  afterAll(() => h.close());

  for (const enc of ['gzip', 'deflate', 'br']) {
    it(`decodes a ${enc} answer for the client and says it is plain`, async () => {
      const r = await call(h.url, { body: chat(`mock:gz:${enc}:json`), headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.json.model).toBe(`gz:${enc}:json`);
    });

    it(`relays a ${enc} event stream as plain whole events`, async () => {
      const x = open(h.url, chat(`mock:gz:${enc}:stream`, { stream: true }));
      expect((await x.head).headers['content-encoding']).toBeUndefined();
      expect(await x.done).toBe('end');
      const all = events(x.text());
      expect(all.slice(0, 3).map((e) => JSON.parse(e).choices[0].delta.content)).toEqual(['one ', 'two ', 'three']);
      expect(all[3]).toBe('[DONE]');
    });

    it(`ends a ${enc} stream cut mid-event with a readable error event, and the client does not hang`, async () => {
      const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: `mock:gz:${enc}:cut`, messages: [{ role: 'user', content: 'hi' }], stream: true });
      const got: string[] = [];
      const failure = await (async () => {
        for await (const part of stream) got.push(part.choices[0]?.delta.content ?? '');
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(got).toEqual(['whole ']);
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as Error).message).toContain('closed the connection before its response was complete');
    });

    it(`blanks the upstream key out of a ${enc} error body`, async () => {
      const r = await call(h.url, { body: chat(`keyed:gz:${enc}:key:401`) });
      expect(r.status).toBe(401);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.text).not.toContain(UPSTREAM_KEY);
      expect(r.json.error.message).toBe('Incorrect API key provided: Bearer ***');
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
    });
  }

  it('answers 502 upstream_undecodable when an error body does not decode and so cannot be checked for the key', async () => {
    const r = await call(h.url, { body: chat('keyed:gz:gzip:corrupt') });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: 'upstream_undecodable', message: expect.stringContaining('gzip body does not decode') });
  });
});
