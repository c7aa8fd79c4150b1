// The upstream of scripts/bench-proxy, run as its own process: an OpenAI-like
// server whose answer is chosen by the model name (instant, delay20, stream).
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
    const model = JSON.parse(Buffer.concat(chunks).toString('utf8')).model;
    const json = () => {
      const body = reply(model);
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
