/**
 * A client's own timeout and retries are the client's business: the server neither
 * reads them nor changes what it does because of them (SPEC §9).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from '../harness.js';

const messages = [{ role: 'user' as const, content: 'hi' }];

describe('client-side timeouts change nothing on the server', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({
      default_timeout: 30,
      providers: { slow: { base_url: base }, strict: { base_url: base, timeout: 0.3 } },
    }));
  });
  afterAll(() => h.close());

  it("the openai client's short timeout only ends its own wait: the proxy logs a client close and aborts the upstream", async () => {
    const at = h.mock.received.length;
    // The client gives up after 1 s, long before the upstream's 4 s answer (and long
    // enough for the request to reach the upstream on a busy machine).
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'x', timeout: 1000, maxRetries: 0 });
    const failure = await client.chat.completions.create({ model: 'slow:slow:4000', messages }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(await (await h.mock.request(at)).ended).toBe('client_closed');
    await eventually(() => h.logs.some((l) => l.event === 'proxy_client_closed'), 'client close logged');
    expect(h.logs.some((l) => l.event === 'proxy_upstream_timeout')).toBe(false);
    // The same request without the client's timeout is answered: the server's own limit is 30 s.
    const patient = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const ok = await patient.chat.completions.create({ model: 'slow:slow:1000', messages });
    expect(ok.model).toBe('slow:1000');
  });

  it("a long client timeout does not extend the server's: the provider's 0.3 s still gives 504", async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'x', timeout: 60_000, maxRetries: 0 });
    const failure = await client.chat.completions.create({ model: 'strict:hang', messages }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_timeout');
  });

  it('the client\'s default retries are separate requests: each reaches the upstream and each is aborted when abandoned', async () => {
    const at = h.mock.received.length;
    // maxRetries left at its default (2): three attempts in all.
    // Each attempt waits 1 s: long enough to reach the upstream on a busy machine.
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'x', timeout: 1000 });
    const failure = await client.chat.completions.create({ model: 'slow:hang', messages }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    const attempts = h.mock.received.slice(at);
    expect(attempts).toHaveLength(3);
    expect(await Promise.all(attempts.map((a) => a.ended))).toEqual(['client_closed', 'client_closed', 'client_closed']);
  });
});
