// A client's retry after a provider's error reaches the provider (SPEC §9: clients'
// retries are theirs). The official openai client retries 429 and 5xx, waiting as the
// answer's Retry-After-Ms / Retry-After says; every attempt it makes must be one the
// provider sees, with and without Retry-After, on one target and on an alias. The
// proxy's clock stands still here, so a provider that asked for a pause is resting for
// the whole test: what a client retrying before the proxy's rest ends meets.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const STATUSES = [429, 500, 502, 503, 504];

/** The openai client with a fetch that counts what it sends. */
function counted(url: string, maxRetries: number): { client: OpenAI; attempts: () => number } {
  let n = 0;
  const client = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: 'x',
    maxRetries,
    fetch: (input, init) => {
      n++;
      return fetch(input, init);
    },
  });
  return { client, attempts: () => n };
}

async function failWith(client: OpenAI, model: string): Promise<number> {
  const e = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OpenAI.APIError);
  return (e as InstanceType<typeof OpenAI.APIError>).status ?? 0;
}

const seen = (model: string) => h!.mock.received.filter((r) => r.json?.model === model).length;
// Four providers per status (all the mock), so that one case's rest does not touch another's.
const providers = (base: string) => Object.fromEntries(STATUSES.flatMap((s) => ['p', 'q', 'r', 't'].map((x) => [`${x}${s}`, { base_url: base }])));

describe('every retry of the openai client reaches the provider', () => {
  it('one target: a 429 or 5xx that asks for a pause (Retry-After, Retry-After-Ms) and one that does not', async () => {
    h = await startHarness((base) => ({ providers: providers(base) }), { now: () => 1_000_000 });
    await Promise.all(
      STATUSES.map(async (s) => {
        // Retry-After 30 s with Retry-After-Ms 1, as OpenAI's API sends them: the client waits 1 ms.
        const paused = counted(h!.url, 2);
        expect(await failWith(paused.client, `p${s}:busy:${s}:30:1`)).toBe(s);
        expect([s, paused.attempts(), seen(`busy:${s}:30:1`)]).toEqual([s, 3, 3]);
        // No Retry-After: the client's own backoff (about half a second), one retry.
        const plain = counted(h!.url, 1);
        expect(await failWith(plain.client, `q${s}:busy:${s}:-`)).toBe(s);
        expect([s, plain.attempts(), seen(`busy:${s}:-`)]).toEqual([s, 2, 2]);
      }),
    );
  });

  it('an alias: a target that asked for a pause is passed over while another can answer; the last target gets every attempt', async () => {
    h = await startHarness(
      (base) => ({
        providers: providers(base),
        aliases: Object.fromEntries(
          STATUSES.flatMap((s) => [
            [`paused${s}`, [`p${s}:busy:${s}:30:1`, `q${s}:busy:${s}:30:1`]],
            [`plain${s}`, [`r${s}:busy:${s}:-`, `t${s}:busy:${s}:-`]],
          ]),
        ),
      }),
      { now: () => 1_000_000 },
    );
    await Promise.all(
      STATUSES.map(async (s) => {
        const paused = counted(h!.url, 2);
        expect(await failWith(paused.client, `paused${s}`)).toBe(s);
        // The first target rests after its first answer; the last is asked every time.
        expect([s, paused.attempts(), h!.mock.received.filter((r) => r.url.endsWith('/chat/completions') && r.json?.model === `busy:${s}:30:1`).length]).toEqual([s, 3, 4]);
      }),
    );
    const fallbacks = h.logs.filter((e) => e.event === 'proxy_fallback');
    for (const s of STATUSES) {
      expect(fallbacks.filter((e) => e.provider === `p${s}`).map((e) => e.reason)).toEqual([s === 429 ? 'status_429' : 'status_5xx', 'resting', 'resting']);
      expect(fallbacks.filter((e) => e.provider === `q${s}`)).toEqual([]);
    }
    // Without Retry-After nobody rests: both targets get every attempt.
    await Promise.all(
      STATUSES.map(async (s) => {
        const plain = counted(h!.url, 1);
        expect(await failWith(plain.client, `plain${s}`)).toBe(s);
        expect([s, plain.attempts(), seen(`busy:${s}:-`)]).toEqual([s, 2, 4]);
      }),
    );
  });
});

it('an alias whose other targets cannot be asked (a tunnel down): the resting target is asked after all, so every retry after the first reaches it', async () => {
  h = await startHarness(
    (base) => ({ providers: { gpu: { base_url: base }, far: { tunnel: 'llm' } }, aliases: { m: ['gpu:busy:503:30:1', 'far:busy:503:30:1'] } }),
    { now: () => 1_000_000, tunnel: () => ({ state: 'STOPPED', localHost: '127.0.0.1', localPort: 1 }) },
  );
  const c = counted(h.url, 2);
  expect(await failWith(c.client, 'm')).toBe(503);
  // The first attempt: gpu answers (and rests), far is refused, far's refusal is the answer.
  // The retries: gpu rests, far is refused, so gpu is asked after all and answers.
  expect([c.attempts(), seen('busy:503:30:1')]).toEqual([3, 3]);
});
