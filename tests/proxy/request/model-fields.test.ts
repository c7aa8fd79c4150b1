// `GET /v1/models` keeps what each server says of its models beyond the id (vLLM's
// max_model_len, root, parent, permission; llama.cpp's meta), which clients read to
// size prompts, while ids get the provider's prefix. Each mock answers the body its
// server sends (shapes of vLLM 0.6, SGLang, llama.cpp's server, Ollama, LM Studio),
// first read by the openai client straight from the mock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from '../harness.js';

const permission = [
  { id: 'modelperm-1f2e', object: 'model_permission', created: 1732000000, allow_create_engine: false, allow_sampling: true, allow_logprobs: true, allow_search_indices: false, allow_view: true, allow_fine_tuning: false, organization: '*', group: null, is_blocking: false },
];

const SERVERS: Record<string, unknown> = {
  vllm: {
    object: 'list',
    data: [
      { id: 'meta-llama/Llama-3.1-8B-Instruct', object: 'model', created: 1732000000, owned_by: 'vllm', root: '/models/llama-3.1-8b', parent: null, max_model_len: 8192, permission },
      // A LoRA adapter served beside its base model.
      { id: 'sql-lora', object: 'model', created: 1732000000, owned_by: 'vllm', root: '/loras/sql', parent: 'meta-llama/Llama-3.1-8B-Instruct', max_model_len: null, permission },
    ],
  },
  sglang: { object: 'list', data: [{ id: 'Qwen/Qwen2.5-7B-Instruct', object: 'model', created: 1732000001, owned_by: 'sglang', root: 'Qwen/Qwen2.5-7B-Instruct', max_model_len: 32768 }] },
  llamacpp: {
    // Newer llama.cpp servers add an Ollama-style `models` list beside OpenAI's `data`.
    models: [{ name: 'qwen2.5-7b-q4.gguf', model: 'qwen2.5-7b-q4.gguf', modified_at: '', size: '', digest: '', type: 'model', description: '', tags: [''], capabilities: ['completion'], parameters: '', details: { parent_model: '', format: 'gguf', family: '', families: [''], parameter_size: '', quantization_level: '' } }],
    object: 'list',
    data: [{ id: 'qwen2.5-7b-q4.gguf', object: 'model', created: 1732000002, owned_by: 'llamacpp', meta: { vocab_type: 2, n_vocab: 152064, n_ctx_train: 32768, n_embd: 3584, n_params: 7615616512, size: 4677120000 } }],
  },
  ollama: { object: 'list', data: [{ id: 'llama3:8b', object: 'model', created: 1718000000, owned_by: 'library' }] },
  // LM Studio leaves `created` out.
  lmstudio: { data: [{ id: 'qwen2.5-7b-instruct', object: 'model', owned_by: 'organization_owner' }], object: 'list' },
  // Anthropic's own list (a `format: anthropic` provider).
  claude: { data: [{ type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' }], has_more: false, first_id: 'claude-sonnet-4-5', last_id: 'claude-sonnet-4-5' },
};

const servers: http.Server[] = [];
const bases: Record<string, string> = {};
let h: Harness;

beforeAll(async () => {
  for (const [name, body] of Object.entries(SERVERS)) {
    const server = http.createServer((req, res) => {
      const list = req.url?.split('?')[0] === '/v1/models';
      res.writeHead(list ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(list ? body : { error: { message: 'not found' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    bases[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }
  h = await startHarness(() => ({
    providers: Object.fromEntries(Object.entries(bases).map(([name, base_url]) => [name, name === 'claude' ? { base_url, format: 'anthropic' } : { base_url }])),
  }));
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

const client = (baseURL: string) => new OpenAI({ baseURL, apiKey: 'x', maxRetries: 0 });

it('every entry reaches the client as its server wrote it, id prefixed, created filled in where it was missing', async () => {
  const through = (await client(`${h.url}/v1`).models.list()).data;
  const expected: unknown[] = [];
  for (const name of Object.keys(SERVERS)) {
    if (name === 'claude') {
      // Anthropic's SDK reads that mock; OpenAI's list gets its object, created (from created_at) and owned_by.
      const direct = (await new Anthropic({ baseURL: bases[name]!.replace(/\/v1$/, ''), apiKey: 'x', maxRetries: 0 }).models.list()).data;
      for (const m of direct) expected.push({ ...m, id: `${name}:${m.id}`, object: 'model', created: Date.parse(m.created_at) / 1000, owned_by: name });
      continue;
    }
    // The SDK reads the server's own answer: the mock is shaped as the client expects.
    const direct = (await client(bases[name]!).models.list()).data;
    expect(direct.length).toBeGreaterThan(0);
    for (const m of direct) expected.push({ ...m, id: `${name}:${m.id}`, created: m.created ?? 0 });
  }
  expect(through).toEqual(expected);
  expect(through.find((m) => m.id === 'vllm:sql-lora')).toMatchObject({ max_model_len: null, root: '/loras/sql', parent: 'meta-llama/Llama-3.1-8B-Instruct', permission });
  expect(through.find((m) => m.id === 'llamacpp:qwen2.5-7b-q4.gguf')).toMatchObject({ meta: { n_ctx_train: 32768 } });
});

it('GET /v1/models/{id} is the same entry, fields and all', async () => {
  const m = await client(`${h.url}/v1`).models.retrieve('vllm:meta-llama/Llama-3.1-8B-Instruct');
  expect(m).toEqual({ ...(SERVERS.vllm as { data: object[] }).data[0], id: 'vllm:meta-llama/Llama-3.1-8B-Instruct' });
});

it("Anthropic's SDK gets an Anthropic provider's own display_name and created_at, through the proxy", async () => {
  const all = (await new Anthropic({ baseURL: h.url, apiKey: 'x', maxRetries: 0 }).models.list({ limit: 100 })).data;
  expect(all.find((m) => m.id === 'claude:claude-sonnet-4-5')).toEqual({ type: 'model', id: 'claude:claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' });
  // Another provider's model, in Anthropic's shape: its id as the name, its created as the date.
  expect(all.find((m) => m.id === 'ollama:llama3:8b')).toEqual({ type: 'model', id: 'ollama:llama3:8b', display_name: 'ollama:llama3:8b', created_at: '2024-06-10T06:13:20Z' });
});
