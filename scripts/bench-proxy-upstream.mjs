// Upstreams of other kinds than scripts/bench-proxy-mock.mjs, as ordinary servers are
// written, run as their own process for scripts/bench-proxy:
//
//   node scripts/bench-proxy-upstream.mjs plain     node:http with its defaults (keep-alive 5 s, announced
//                                                   in `Keep-Alive: timeout=5`); the canned chat answer
//                                                   with Content-Length, written by writeHead + end
//   node scripts/bench-proxy-upstream.mjs uvicorn   as uvicorn (vLLM, SGLang…) behaves: no Keep-Alive
//                                                   header, and a connection idle for 5 s closed
//
// Both answer `"stream": true` with an event stream of two chunks 2 ms apart and
// [DONE], and a model whose name ends in delay20 after 20 ms. Prints
// {"port": N} once listening.
import http from 'node:http';

const kind = process.argv[2] ?? 'plain';
if (kind !== 'plain' && kind !== 'uvicorn') throw new Error(`unknown upstream kind ${kind}: plain or uvicorn`);

const answer = (model) =>
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

function handle(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {}
    const model = body.model ?? 'unknown';
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk(model, 'first'));
      setTimeout(() => {
        res.write(chunk(model, ' second'));
        res.end('data: [DONE]\n\n');
      }, 2);
      return;
    }
    const json = answer(model);
    const send = () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      res.end(json);
    };
    // A model named …delay20 answers after 20 ms, as a model server that works a little.
    if (model.endsWith('delay20')) setTimeout(send, 20);
    else send();
  });
}

let server;
if (kind === 'plain') server = http.createServer(handle);
else {
  // keepAliveTimeout 0: Node neither announces nor enforces a keep-alive time; the
  // idle close is ours, as uvicorn's timeout_keep_alive (5 s) does it.
  server = http.createServer({ keepAliveTimeout: 0 }, (req, res) => {
    const socket = req.socket;
    clearTimeout(socket.idleTimer);
    res.on('finish', () => {
      clearTimeout(socket.idleTimer);
      socket.idleTimer = setTimeout(() => socket.destroy(), 5000);
    });
    handle(req, res);
  });
  server.on('connection', (socket) => (socket.idleTimer = setTimeout(() => socket.destroy(), 5000)));
}
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
