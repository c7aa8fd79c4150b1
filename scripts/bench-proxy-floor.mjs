// The floor of scripts/bench-proxy: the least a Node proxy built on the same parts
// can do per request, run as its own process next to ours. A node:http server that
// reads the body, drops the `bench:` (or `anth:`) prefix of the model with a string replace,
// sends it to the mock through undici's dispatcher with the proxy's pool settings,
// and relays the status, headers and body back. No checks, routing, timers, records
// or series: what it costs is Node's HTTP server, undici and the socket writes on this
// machine, which is the part of the proxy's CPU per request no change to its own code
// can remove. Not a product: every failure ends the client's connection.
//
//   node scripts/bench-proxy-floor.mjs <upstream port>     prints {"port": N} once listening
import http from 'node:http';
import { Agent } from 'undici';

const origin = `http://127.0.0.1:${Number(process.argv[2])}`;
const agent = new Agent({ keepAliveTimeout: 4000, keepAliveTimeoutThreshold: 1000, headersTimeout: 0, bodyTimeout: 0, pipelining: 1, connect: { noDelay: true } });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

const server = http.createServer({ noDelay: true, keepAliveTimeout: 5000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    // latin1 keeps every byte as it came; the prefix is ASCII.
    const text = Buffer.concat(chunks).toString('latin1');
    const body = Buffer.from(text.replace(text.includes('"model":"anth:') ? '"model":"anth:' : '"model":"bench:', '"model":"'), 'latin1');
    // The body is passed on as it arrives (an event stream too); a body that comes in one piece leaves with the head.
    let length = -1;
    agent.dispatch(
      { origin, path: req.url, method: req.method, headers: ['content-type', req.headers['content-type'], 'content-length', String(body.length)], body },
      {
        onConnect() {},
        onHeaders(status, raw) {
          const headers = [];
          for (let i = 0; i < raw.length; i += 2) {
            const name = raw[i].toString('latin1').toLowerCase();
            const value = raw[i + 1].toString('latin1');
            if (name === 'content-length') length = Number(value);
            if (!HOP.has(name)) headers.push(name, value);
          }
          res.writeHead(status, headers);
          return true;
        },
        onData(c) {
          if (c.length === length) res.end(c);
          else res.write(c);
          return true;
        },
        onComplete() {
          if (!res.writableEnded) res.end();
        },
        onError() {
          res.destroy();
        },
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
// process.exit (not a bare kill) lets --cpu-prof write its profile.
process.on('SIGTERM', () => process.exit(0));
