// CPU per request of translated /v1/messages (to an OpenAI-format provider) against
// the passthrough /v1/messages (to a `format: anthropic` one), in the same proxy
// process, alternated burst by burst so that load from elsewhere falls on both alike:
// a steadier figure for SPEC §9a's "within 10 % of passthrough" than the endpoint
// table of scripts/bench-proxy, whose bursts are short.
//
//   node scripts/bench-proxy-translate.mjs [node|hono] [rounds]
//
// Uses the proxy scripts/bench-proxy compiled into test-artifacts/bench-proxy/build
// (run that first), its mock and its server. Each round sends 4000 requests of each
// kind at concurrency 16; the proxy's CPU is read from /proc before and after.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const build = join(here, '../test-artifacts/bench-proxy/build/proxy');
const mode = process.argv[2] ?? 'node';
const rounds = Number(process.argv[3] ?? 10);
const PER_BURST = 4000;
const children = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGTERM')));

function start(argv) {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')} did not start in 15 s`)), 15_000);
    child.stdout.once('data', (d) => {
      clearTimeout(timer);
      resolve({ pid: child.pid, port: JSON.parse(String(d).split('\n')[0]).port });
    });
  });
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const mock = await start([join(here, 'bench-proxy-mock.mjs')]);
const proxy = await start([join(here, 'bench-proxy-server.mjs'), String(mock.port), mode, build]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const body = (prefix) => Buffer.from(JSON.stringify({ model: `${prefix}instant`, max_tokens: 16, messages: [{ role: 'user', content: 'Say ok.' }] }));
const bodies = { passthrough: body('anth:'), translated: body('bench:') };

function once(b) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxy.port, method: 'POST', path: '/v1/messages', agent, headers: { 'content-type': 'application/json', 'content-length': b.length } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
      res.resume();
      res.on('end', resolve);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end(b);
  });
}

async function burst(b, n) {
  let sent = 0;
  const loop = async () => {
    while (sent++ < n) await once(b);
  };
  const before = cpuSeconds(proxy.pid);
  await Promise.all(Array.from({ length: 16 }, loop));
  return cpuSeconds(proxy.pid) - before;
}

// Warm-up: both paths compiled and the connections open before anything is counted.
await burst(bodies.passthrough, 3000);
await burst(bodies.translated, 3000);
const total = { passthrough: 0, translated: 0 };
for (let r = 0; r < rounds; r++) {
  for (const kind of r % 2 === 0 ? ['passthrough', 'translated'] : ['translated', 'passthrough']) total[kind] += await burst(bodies[kind], PER_BURST);
}
const us = (s) => (s / (PER_BURST * rounds)) * 1e6;
console.log(JSON.stringify({ mode, rounds, passthroughUsPerRequest: us(total.passthrough), translatedUsPerRequest: us(total.translated), ratio: total.translated / total.passthrough }));
process.exit(0);
