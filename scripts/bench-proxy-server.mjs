// The proxy under test in scripts/bench-proxy, run as its own process from dist/:
//
//   node scripts/bench-proxy-server.mjs <upstream port> node <build>   as `tunnel-manager proxy` serves it
//   node scripts/bench-proxy-server.mjs <upstream port> hono <build>   as the daemon serves it: the Hono
//                                                                      sub-app at /v1 on @hono/node-server,
//                                                                      its endpoints by the app's fastPath
//                                                                      before Hono (src/api/server.ts)
//
// <build> is the folder of the compiled src/proxy. Prints {"port": N} once listening.
import { getRequestListener } from '@hono/node-server';
import http from 'node:http';
import { Hono } from 'hono';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const mockPort = Number(process.argv[2]);
const mode = process.argv[3] ?? 'node';
const build = process.argv[4];
const { createProxyApp } = await import(pathToFileURL(join(build, 'app.js')).href);
// The standalone listener's module: server.js, or serve.js in builds from before src/proxy had folders.
const { startProxyServer } = await import(pathToFileURL(join(build, existsSync(join(build, 'server.js')) ? 'server.js' : 'serve.js')).href);
const config = {
  default_timeout: 600,
  providers: {
    bench: { base_url: `http://127.0.0.1:${mockPort}/v1` },
    // The same mock, for Anthropic's /v1/messages.
    anth: { base_url: `http://127.0.0.1:${mockPort}/v1`, format: 'anthropic' },
  },
};
const deps = { getConfig: () => config };

let port;
let close;
if (mode === 'hono') {
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  const proxyApp = createProxyApp(deps);
  app.route('/v1', proxyApp);
  const listener = getRequestListener(app.fetch);
  // A build from before the fast path has none: then every request goes through Hono.
  const fast = proxyApp.fastPath ?? (() => false);
  const server = http.createServer((req, res) => fast(req, res) || void listener(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
  close = () => new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
} else {
  const server = await startProxyServer({ host: '127.0.0.1', port: 0, deps });
  port = server.port;
  close = () => server.close();
}
console.log(JSON.stringify({ port }));
// process.exit (not a bare kill) lets --cpu-prof write its profile.
process.on('SIGTERM', () => void close().then(() => process.exit(0)));
