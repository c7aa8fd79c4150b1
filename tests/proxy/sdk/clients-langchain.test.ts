// LangChain JS (`@langchain/openai`) through the proxy, unchanged, on both listeners
// (`tunnel-manager proxy`'s and the daemon's /v1): chat (invoke and stream), the
// Responses API, embeddings, aliases, and its errors. LangChain retries failures with
// its own AsyncCaller (maxRetries, default 6), which does not read `x-should-retry`:
// the proxy's 504 is retried unless the user sets `maxRetries`.
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-langchain';

type Failure = Error & { status?: number; lc_error_code?: string };
/** The error `p` rejects with; a success fails the test. */
const failure = (p: Promise<unknown>): Promise<Failure> =>
  p.then(
    () => {
      throw new Error('expected a failure, got an answer');
    },
    (e: unknown) => e as Failure,
  );
const UPSTREAM_KEY = 'sk-upstream-langchain';

describe.each<Listener>(['proxy', 'daemon'])('LangChain through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      (base) => ({
        api_keys: ['${PROXY_KEY}'],
        providers: {
          mock: { base_url: base, api_key: '${UPSTREAM_KEY}' },
          slow: { base_url: base, timeout: 0.3 },
        },
        aliases: { 'gpt-4o-mini': 'mock:llama3:8b' },
      }),
      { env: { PROXY_KEY: KEY, UPSTREAM_KEY } },
      listener,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const configuration = () => ({ baseURL: `${h.url}/v1` });
  const chat = (model: string, extra: Record<string, unknown> = {}) => new ChatOpenAI({ model, apiKey: KEY, configuration: configuration(), maxRetries: 0, ...extra });
  const last = () => h.mock.received[h.mock.received.length - 1]!;
  /** How many requests the proxy has answered (one `proxy_request` line each). */
  const answered = () => h.logs.filter((e) => e.event === 'proxy_request').length;

  it('ChatOpenAI.invoke through an alias: the provider gets the bare model and its own key', async () => {
    const reply = await chat('gpt-4o-mini').invoke('hi');
    expect(reply.content).toBe('hello from the mock');
    expect(last().url).toBe('/v1/chat/completions');
    expect(last().json?.model).toBe('llama3:8b');
    expect(last().headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('ChatOpenAI.stream with prefix:model, with the usage LangChain asks for', async () => {
    let text = '';
    let usage: { input_tokens: number; output_tokens: number } | undefined;
    for await (const piece of await chat('mock:llama3:8b').stream('hi')) {
      text += String(piece.content);
      usage = piece.usage_metadata ?? usage;
    }
    expect(text).toBe('hello from the mock');
    expect(last().json?.stream_options).toEqual({ include_usage: true });
    expect(usage).toMatchObject({ input_tokens: 7, output_tokens: 4 });
  });

  it('ChatOpenAI with useResponsesApi: invoke and stream go to /v1/responses', async () => {
    const model = chat('mock:llama3:8b', { useResponsesApi: true });
    const reply = await model.invoke('hi');
    expect(reply.text).toBe('hello from the mock');
    expect(last().url).toBe('/v1/responses');
    expect(last().json?.model).toBe('llama3:8b');
    let text = '';
    for await (const piece of await model.stream('hi')) text += piece.text;
    expect(text).toBe('hello from the mock');
    expect(last().json?.stream).toBe(true);
  });

  it('OpenAIEmbeddings.embedDocuments and embedQuery', async () => {
    const embeddings = new OpenAIEmbeddings({ model: 'mock:nomic-embed-text', apiKey: KEY, configuration: configuration(), maxRetries: 0 });
    expect(await embeddings.embedDocuments(['a', 'b'])).toEqual([[0.5, -0.25, 0.125], [0.5, -0.25, 0.125]]);
    expect(last().url).toBe('/v1/embeddings');
    expect(last().json?.model).toBe('nomic-embed-text');
    expect(await embeddings.embedQuery('a')).toEqual([0.5, -0.25, 0.125]);
  });

  it('an unknown model is an error naming it, asked once (LangChain does not retry a 404)', async () => {
    const before = answered();
    const e = await failure(chat('nowhere:llama3', { maxRetries: 6 }).invoke('hi'));
    expect(e).toBeInstanceOf(Error);
    expect(e.status).toBe(404);
    // LangChain recognises the proxy's model_not_found as its own MODEL_NOT_FOUND.
    expect(e.lc_error_code).toBe('MODEL_NOT_FOUND');
    expect(e.message).toMatch(/no provider "nowhere" \(known prefixes: mock, slow; aliases: gpt-4o-mini\)/);
    expect(answered() - before).toBe(1);
  });

  it('a stream the provider cuts ends in an error, not a silently short answer', async () => {
    const pieces: string[] = [];
    const e = await failure(
      (async () => {
        for await (const piece of await chat('mock:die-stream', { streamUsage: false }).stream('hi')) pieces.push(String(piece.content));
      })(),
    );
    expect(pieces.join('')).toBe('before dying ');
    expect(e.message).toMatch(/upstream_disconnected|closed the connection/);
  });

  it("the proxy's 504 is asked once with maxRetries: 0, and once more per retry LangChain is allowed", async () => {
    const sent = () => h.mock.received.filter((r) => r.json?.model === 'hang').length;
    const e = await failure(chat('slow:hang').invoke('hi'));
    expect(e.status).toBe(504);
    expect(e.message).toMatch(/did not answer within 0.3 s/);
    expect(sent()).toBe(1);
    // x-should-retry: false does not stop LangChain's own retries: one retry, one more request.
    const again = await failure(chat('slow:hang', { maxRetries: 1 }).invoke('hi'));
    expect(again.status).toBe(504);
    expect(sent()).toBe(3);
  });
});
