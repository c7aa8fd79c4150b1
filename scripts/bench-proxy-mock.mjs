// The upstream of scripts/bench-proxy, run as its own process: an OpenAI-like
// server whose answer is chosen by the model name (instant, delay20, stream), in
// the shape of the endpoint asked (chat, responses, embeddings, completions, rerank,
// Anthropic's messages, and a transcription upload), each about the size of a short
// chat answer.
import http from 'node:http';

const reply = (model) =>
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
const answers = {
  '/v1/responses': (model) => JSON.stringify({ id: 'resp_bench', object: 'response', created_at: 1, model, status: 'completed', output: [{ type: 'message', id: 'msg_bench', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }),
  '/v1/embeddings': (model) => JSON.stringify({ object: 'list', model, data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789, 0.1011, -0.1213, 0.1415, 0.1617, -0.1819] }], usage: { prompt_tokens: 1, total_tokens: 1 } }),
  '/v1/completions': (model) => JSON.stringify({ id: 'cmpl-bench', object: 'text_completion', created: 1, model, choices: [{ index: 0, text: 'ok', finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
  '/v1/rerank': (model) => JSON.stringify({ id: 'rerank-bench', model, usage: { total_tokens: 3 }, results: [{ index: 0, document: { text: 'ok' }, relevance_score: 0.9 }, { index: 1, document: { text: 'no' }, relevance_score: 0.1 }] }),
  '/v1/messages': (model) => JSON.stringify({ id: 'msg_bench', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }),
};
const chunk = (model, content) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"id":"instant","object":"model","owned_by":"bench"}]}');
      return;
    }
    if (req.headers['content-type']?.startsWith('multipart/form-data')) {
      // A transcription upload: the answer does not depend on the form.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 13 });
      res.end('{"text":"ok"}');
      return;
    }
    const model = JSON.parse(Buffer.concat(chunks).toString('utf8')).model;
    const json = () => {
      const body = (answers[req.url] ?? reply)(model);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (model === 'delay20') setTimeout(json, 20);
    else if (model === 'stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk(model, 'first'));
      setTimeout(() => {
        res.write(chunk(model, ' second'));
        res.end('data: [DONE]\n\n');
      }, 2);
    } else json();
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
