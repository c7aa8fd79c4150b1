#!/usr/bin/env node
// The proxy as users run it, against more than one kind of upstream, next to its
// floor, in one interleaved run. Complements scripts/bench-proxy (which serves the
// proxy from a bench harness without the config watcher, and only its own mock):
//
//   node scripts/bench-proxy-kinds.mjs [--rounds N] [--kinds mock,plain,uvicorn] [--before <dist>]
//                                      [--parent-files N] [--churn N]
//
// Upstream kinds: `mock` (scripts/bench-proxy-mock.mjs), `plain` (node:http with its
// defaults: keep-alive 5 s, announced), `uvicorn` (no Keep-Alive header, idle
// connections closed after 5 s); see scripts/bench-proxy-upstream.mjs. For each kind,
// the targets are: the upstream itself (direct), the bare relay
// (scripts/bench-proxy-floor.mjs), the built `tunnel-manager proxy` and `tunnel-manager
// serve` (the daemon's /v1) from dist/, each reading its config from a folder under
// a folder under the system's temporary folder that is kept as busy as a shared /tmp
// (--parent-files, default 2000 files in it; --churn, default 200 files created and
// removed per second), and with --before, the same two from another build (to compare a change
// in the same run). Each round sends one request to every target in turn:
//
//   c=1        a chat request, the whole answer timed (added = target - direct)
//   first      the official `openai` client with `stream: true`: from the call to the
//              first chunk out of its iterator
//   c=32       bursts of 32 concurrent loops per target, order reversed every other
//              round: requests per second against a 20 ms upstream, and the CPU time
//              of the serving process per request against an instant one
//
// Run `npm run build` first. Prints a Markdown table per upstream kind.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { cpuSeconds, startChild as startChild_, startProduct as startProduct_ } from './lib/bench-proxy-procs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i === -1 ? def : argv[i + 1];
};
const rounds = Number(opt('--rounds', 2000));
const kinds = opt('--kinds', 'mock,plain,uvicorn').split(',');
const before = opt('--before', null);
// The configs' parent folder, made as busy as a shared /tmp: this many files in it,
// and this many created and removed again per second by a helper process.
const parentFiles = Number(opt('--parent-files', 2000));
const churn = Number(opt('--churn', 200));
const children = [];
// Processes that live for the whole run (the busy folder's churn).
const helpers = [];
const temps = [];
process.on('exit', () => {
  for (const c of [...children, ...helpers]) c.kill('SIGTERM');
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));
const startChild = (args) => startChild_(args, children);

/** A folder under the temporary folder with `parentFiles` files, kept busy by a helper process. */
function busyParent() {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-proxy-kinds-'));
  temps.push(dir);
  for (let i = 0; i < parentFiles; i++) writeFileSync(join(dir, `job-${i}.out`), 'x');
  if (churn > 0) {
    const code = `const fs=require('fs');let i=0;setInterval(()=>{for(let k=0;k<${Math.max(1, Math.round(churn / 100))};k++){const f=${JSON.stringify(dir)}+'/churn-'+(i++%50);try{fs.writeFileSync(f,'x');fs.unlinkSync(f)}catch{}}},10);process.on('SIGTERM',()=>process.exit(0));`;
    helpers.push(spawn(process.execPath, ['-e', code], { stdio: 'ignore' }));
  }
  return dir;
}
const parent = busyParent();

/** `tunnel-manager proxy` or `serve` from a build, its config in a fresh folder of the busy parent. */
const startProduct = (dist, command, upstreamPort) => startProduct_({ dist, command, upstreamPort, parent, children });

const bodies = new Map();
const bodyOf = (model) => {
  let b = bodies.get(model);
  if (b === undefined) bodies.set(model, (b = Buffer.from(JSON.stringify({ model, messages: [{ role: 'user', content: 'Say ok.' }] }))));
  return b;
};

function once(t, model) {
  const body = bodyOf(t.prefix + model);
  return new Promise((ok, fail) => {
    const start = process.hrtime.bigint();
    const req = http.request(
      { host: '127.0.0.1', port: t.port, method: 'POST', path: '/v1/chat/completions', agent: t.agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        if (res.statusCode !== 200) fail(new Error(`${t.name}: HTTP ${res.statusCode}`));
        res.resume();
        res.on('end', () => ok(Number(process.hrtime.bigint() - start) / 1e6));
      },
    );
    req.on('error', (e) => fail(new Error(`${t.name}: ${e.message}`)));
    req.end(body);
  });
}

async function firstChunk(t) {
  const start = process.hrtime.bigint();
  const stream = await t.openai.chat.completions.create({ model: `${t.prefix}stream`, messages: [{ role: 'user', content: 'Say ok.' }], stream: true });
  let first = 0;
  for await (const _ of stream) if (first === 0) first = Number(process.hrtime.bigint() - start) / 1e6;
  return first;
}

async function burst(t, model, seconds) {
  const deadline = Date.now() + seconds * 1000;
  let n = 0;
  const cpu0 = cpuSeconds(t.pid);
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < deadline) {
        await once(t, model);
        n++;
      }
    }),
  );
  return { n, s: Number(process.hrtime.bigint() - t0) / 1e9, cpu: cpuSeconds(t.pid) - cpu0 };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))];
};
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

async function runKind(kind) {
  const upstream = kind === 'mock' ? await startChild([join(here, 'bench-proxy-mock.mjs')]) : await startChild([join(here, 'bench-proxy-upstream.mjs'), kind]);
  const floor = await startChild([join(here, 'bench-proxy-floor.mjs'), String(upstream.port)]);
  const spec = [
    ['direct', upstream, ''],
    ['floor', floor, 'bench:'],
    ['proxy', await startProduct(join(root, 'dist'), 'proxy', upstream.port), 'bench:'],
    ['daemon', await startProduct(join(root, 'dist'), 'serve', upstream.port), 'bench:'],
  ];
  if (before !== null) {
    spec.push(['proxy (before)', await startProduct(resolve(before), 'proxy', upstream.port), 'bench:']);
    spec.push(['daemon (before)', await startProduct(resolve(before), 'serve', upstream.port), 'bench:']);
  }
  const targets = spec.map(([name, p, prefix]) => ({
    name,
    port: p.port,
    pid: p.child.pid,
    prefix,
    agent: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 }),
    openai: new OpenAI({ baseURL: `http://127.0.0.1:${p.port}/v1`, apiKey: 'bench', maxRetries: 0 }),
    lat: [],
    first: [],
    slow: { n: 0, s: 0 },
    cpu: { n: 0, cpu: 0 },
  }));
  // Warm-up, not counted: a 1 s burst at c=32 per target, so that every process runs
  // its optimised code when the timing starts (the product has more code to compile
  // than the floor; 100 requests each, as before, may leave it part-way there).
  for (const t of targets) await burst(t, 'instant', 1);
  for (const t of targets) for (let i = 0; i < 20; i++) await firstChunk(t);
  console.error(`${kind}: ${rounds} interleaved rounds at c=1…`);
  for (let r = 0; r < rounds; r++) for (const t of targets) t.lat.push(await once(t, 'instant'));
  console.error(`${kind}: ${Math.ceil(rounds / 4)} interleaved rounds of the openai client's first streamed chunk…`);
  for (let r = 0; r < Math.ceil(rounds / 4); r++) for (const t of targets) t.first.push(await firstChunk(t));
  console.error(`${kind}: c=32 bursts…`);
  // The CPU figure moves by a few percent from burst to burst on a shared 2-core machine: 4 bursts of 2 s per target at least.
  const burstRounds = Math.max(4, Math.round(rounds / 500));
  for (let r = 0; r < burstRounds; r++) {
    for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
      const s = await burst(t, 'delay20', 1);
      t.slow.n += s.n;
      t.slow.s += s.s;
      const c = await burst(t, 'instant', 2);
      t.cpu.n += c.n;
      t.cpu.cpu += c.cpu;
    }
  }
  for (const c of children.splice(0)) c.kill('SIGTERM');
  const direct = targets[0];
  const floorT = targets[1];
  const added = (t, p) => pct(t.lat, p) - pct(direct.lat, p);
  const addedFirst = (t, p) => pct(t.first, p) - pct(direct.first, p);
  const rps = (t) => t.slow.n / t.slow.s;
  const cpuUs = (t) => (t.cpu.cpu / t.cpu.n) * 1e6;
  // The targets, each relative to what this machine allows: the proxy's own work is what
  // a design can change; the floor is what any proxy built on these parts costs.
  const met = (t) => {
    if (t === floorT) return '';
    const misses = [];
    if (added(t, 0.5) > added(floorT, 0.5) + 0.05) misses.push('p50 > floor + 0.05 ms');
    if (addedFirst(t, 0.99) > 2) misses.push('first chunk p99 > 2 ms');
    if (rps(t) / rps(direct) < 0.95) misses.push('c=32 < 0.95×');
    if (cpuUs(t) > 1.15 * cpuUs(floorT)) misses.push('CPU > 1.15× floor');
    return misses.length === 0 ? 'yes' : `**no**: ${misses.join('; ')}`;
  };
  const rows = targets.slice(1).map((t) => {
    const cells = [
      t.name,
      `${f(added(t, 0.5))} ms`,
      `${f(added(t, 0.99))} ms`,
      `${f(addedFirst(t, 0.5))} ms`,
      `${f(addedFirst(t, 0.99))} ms`,
      `${f(rps(t) / rps(direct), 3)}×`,
      `${f(cpuUs(t), 0)} µs${t === floorT ? '' : ` (${f(cpuUs(t) / cpuUs(floorT), 2)}×)`}`,
      met(t),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  return [
    `**${kind}** upstream: direct p50 ${f(pct(direct.lat, 0.5))} ms, first streamed chunk (openai client) p50 ${f(pct(direct.first, 0.5))} ms; ${direct.lat.length} rounds at c=1, ${direct.first.length} of streams, ${burstRounds} rounds of c=32 bursts per target (1 s against the 20 ms upstream, 2 s against the instant one).`,
    '',
    '| target | added p50, c=1 | added p99, c=1 | added first chunk p50 (openai, stream) | added first chunk p99 | c=32 req/s, 20 ms upstream, × direct | CPU per request, c=32 instant (× floor) | targets met: p50 ≤ floor + 0.05 ms, first chunk p99 ≤ 2 ms, c=32 ≥ 0.95×, CPU ≤ 1.15× floor |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const loadBefore = os.loadavg().map((x) => x.toFixed(1)).join(', ');
const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const out = [];
for (const kind of kinds) out.push(await runKind(kind));
console.log(
  `Command: \`node scripts/bench-proxy-kinds.mjs ${argv.join(' ')}\`. ${started}, Node ${process.version}, ${os.availableParallelism()} cores; load average (1, 5, 15 min) before ${loadBefore}, after ${os.loadavg().map((x) => x.toFixed(1)).join(', ')}.\n\n${out.join('\n\n')}`,
);
process.exit(0);
