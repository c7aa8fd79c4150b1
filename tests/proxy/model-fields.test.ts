// `GET /v1/models` keeps what each server says of its models beyond the id (vLLM's
// max_model_len, root, parent, permission; llama.cpp's meta), which clients read to
// size prompts, while ids get the provider's prefix. Each mock answers the body its
// server sends (shapes of vLLM 0.6, SGLang, llama.cpp's server, Ollama, LM Studio),
// first read by the openai client straight from the mock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

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
};

const servers: http.Server[] = [];
const bases: Record<string, string> = {};
let h: Harness;

beforeAll(async () => {
  for (const [name, body] of Object.entries(SERVERS)) {
    const server = http.createServer((req, res) => {
      res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url === '/v1/models' ? body : { error: { message: 'not found' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    bases[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }
  h = await startHarness(() => ({ providers: Object.fromEntries(Object.entries(bases).map(([name, base_url]) => [name, { base_url }])) }));
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
