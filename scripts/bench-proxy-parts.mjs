#!/usr/bin/env node
// What each part of the proxy's own work costs, measured beside the floor: the CPU per
// request of the built `tunnel-manager proxy` with one part switched off at a time,
// next to the whole proxy and the bare relay (scripts/bench-proxy-floor.mjs), in one
// interleaved run. It answers "where does the CPU above the floor go" with figures
// rather than a profile's guesses (a sampling profile charges node:http, undici and
// the kernel for work our code causes, and a tight loop over one function runs it hot).
//
//   node scripts/bench-proxy-parts.mjs [--rounds N] [--seconds S] [--parts a,b,…]
//
// --parts     which parts, by id (default record,parse,guard,timer; `all` for every one:
//             log,usage,metrics,record,parse,guard,timer,headers). Each is one more
//             process serving, and with more than four the figures move by ±2 µs from
//             run to run
//
// The sources are copied into test-artifacts/bench-proxy-parts/src with a switch put
// into each part (a text edit whose anchor must be found, so the script stops when the
// source moves instead of measuring nothing), compiled with tsc, and run once per part
// with PARTS_OFF=<part> (the switch is read once, at start). The copy is never the
// product: what is switched off here is behaviour the proxy must keep (SPEC §9).
//
// Each round runs a burst of 32 concurrent loops against every process in turn (the
// order reversed every other round), chat requests to the instant mock, and reads each
// process's CPU time from /proc. The figure per part is the median over the rounds of
// its CPU per request over the floor's in the same round, so that what the machine
// does meanwhile falls on both.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, startChild as startChild_, startProduct } from './lib/bench-proxy-procs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const work = join(root, 'test-artifacts/bench-proxy-parts');
const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '2' },
    // Four at a time by default: with all eight (11 processes on 2 cores) one part moved by ±2 µs from run to run.
    parts: { type: 'string', default: 'record,parse,guard,timer' },
  },
});

// Read from the environment once per process, not at each call: a switch that read
// process.env per request would itself cost the part's copy about 0.1 µs a call.
const off = (part) => `((globalThis as { partsOff?: Set<string> }).partsOff ??= new Set((process.env.PARTS_OFF ?? '').split(','))).has('${part}')`;

/**
 * The parts, each with what switching it off means and the edits that do it. An edit
 * replaces `anchor` (which must occur in the file) with `with`.
 */
const PARTS = [
  {
    name: 'log line',
    id: 'log',
    what: 'the `proxy_request` log line is not made or written',
    edits: [{ file: 'proxy/observe/request-record.ts', anchor: '    if (log !== undefined) {', with: `    if (log !== undefined && !${off('log')}) {` }],
  },
  {
    name: 'usage reading',
    id: 'usage',
    what: "the answer is not searched for the provider's token counts",
    edits: [
      {
        file: 'proxy/observe/request-record.ts',
        anchor: '      reader = this.reader = createUsageReader(!startsJson(chunk));',
        with: `      reader = this.reader = ${off('usage')} ? { chunk() {}, result: () => ({ input: null, output: null }) } : createUsageReader(!startsJson(chunk));`,
      },
    ],
  },
  {
    name: 'series',
    id: 'metrics',
    what: 'the request is not counted in the `/metrics` series',
    edits: [{ file: 'proxy/observe/request-record.ts', anchor: '    metrics?.record({', with: `    if (!${off('metrics')}) metrics?.record({` }],
  },
  {
    name: 'the whole record',
    id: 'record',
    what: 'no record at all: no log line, usage, series or Server-Timing',
    edits: [
      {
        file: 'proxy/observe/request-record.ts',
        anchor: '  return new RequestObservation(o.requestId, o.endpoint, o.res, o.log, o.metrics);',
        with: `  if (${off('record')}) return { model: null, provider: null, client: null, onEnd: null, tap() {}, fellBack() {}, watch() {}, cut() {} };\n  return new RequestObservation(o.requestId, o.endpoint, o.res, o.log, o.metrics);`,
      },
    ],
  },
  {
    name: 'body checks',
    id: 'parse',
    what: 'the body is not checked (UTF-8, JSON, `model`, `messages`): `model` is found with a pattern',
    edits: [
      {
        file: 'proxy/request/json-body.ts',
        anchor: 'export function parseModelRequest(endpoint: Endpoint, bytes: Buffer): Result<ModelRequest, ProxyError> {',
        with: `export function parseModelRequest(endpoint: Endpoint, bytes: Buffer): Result<ModelRequest, ProxyError> {\n  if (${off('parse')}) return { ok: true, value: { bytes, model: /"model":"([^"]*)"/.exec(bytes.toString('latin1'))?.[1] ?? '', fields: {} } };`,
      },
    ],
  },
  {
    name: 'browser guard',
    id: 'guard',
    what: "no Host, Origin or Content-Type rule (SPEC §6) and no Host requirement",
    edits: [
      { file: 'edge/browser-guard.ts', anchor: '  const hostOk = rememberedHostRule(policy);', with: `  if (${off('guard')}) return listener;\n  const hostOk = rememberedHostRule(policy);` },
      { file: 'http-listener.ts', anchor: 'export function requireHost(listener: RequestListener, methods: string): RequestListener {', with: `export function requireHost(listener: RequestListener, methods: string): RequestListener {\n  if (${off('guard')}) return listener;` },
    ],
  },
  {
    name: 'provider timer',
    id: 'timer',
    what: "no timer bounds the provider's silence",
    edits: [{ file: 'proxy/relay/gap-timer.ts', anchor: '    this.timer = setTimeout(this.fire, ms);', with: `    this.timer = (${off('timer')} ? undefined : setTimeout(this.fire, ms)) as NodeJS.Timeout;` }],
  },
  {
    name: 'request headers',
    id: 'headers',
    what: 'the provider gets only Content-Type and Content-Length, as from the floor (no Accept, Accept-Encoding, X-Request-Id or forwarded headers)',
    edits: [{ file: 'proxy/relay/upstream-headers.ts', anchor: '  const from = req.headers;', with: `  if (${off('headers')}) return ['content-type', 'application/json'];\n  const from = req.headers;` }],
  },
];

const children = [];
// The products' config folders, removed on exit.
const configs = mkdtempSync(join(os.tmpdir(), 'bench-proxy-parts-'));
process.on('exit', () => {
  children.forEach((c) => c.kill('SIGTERM'));
  rmSync(configs, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));

/** Copies src/ with every part's switch put in, and compiles it; returns the folder of main.js. */
function build(parts) {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(join(root, 'src'), join(work, 'src'), { recursive: true });
  for (const part of parts) {
    for (const e of part.edits) {
      const file = join(work, 'src', e.file);
      const text = readFileSync(file, 'utf8');
      if (!text.includes(e.anchor)) throw new Error(`src/${e.file} no longer holds the anchor of part "${part.id}": ${JSON.stringify(e.anchor)}; update scripts/bench-proxy-parts.mjs`);
      writeFileSync(file, text.replace(e.anchor, e.with));
    }
  }
  const tsconfig = join(work, 'tsconfig.json');
  writeFileSync(tsconfig, JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist', sourceMap: false, declaration: false, noEmitOnError: true }, include: ['src/**/*.ts'] }));
  console.error('compiling the switched copy of src/ into test-artifacts/bench-proxy-parts/dist…');
  const r = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('the switched copy of src/ does not compile');
  return join(work, 'dist');
}

const startChild = async (args) => {
  const { child, port } = await startChild_(args, children);
  return { pid: child.pid, port };
};

/** `tunnel-manager proxy` from `dist` with the parts `offIds` switched off. */
async function startProxy(dist, upstreamPort, offIds) {
  const { child, port } = await startProduct({ dist, command: 'proxy', upstreamPort, parent: configs, children, env: { PARTS_OFF: offIds } });
  return { pid: child.pid, port };
}

const body = Buffer.from(JSON.stringify({ model: 'bench:instant', messages: [{ role: 'user', content: 'Say ok.' }] }));
function once(t) {
  return new Promise((ok, fail) => {
    const req = http.request(
      { host: '127.0.0.1', port: t.port, method: 'POST', path: '/v1/chat/completions', agent: t.agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        if (res.statusCode !== 200) fail(new Error(`${t.name}: HTTP ${res.statusCode}`));
        res.resume();
        res.on('end', ok);
      },
    );
    req.on('error', (e) => fail(new Error(`${t.name}: ${e.message}`)));
    req.end(body);
  });
}

async function burst(t, seconds) {
  const deadline = Date.now() + seconds * 1000;
  let n = 0;
  const cpu0 = cpuSeconds(t.pid);
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < deadline) {
        await once(t);
        n++;
      }
    }),
  );
  return (cpuSeconds(t.pid) - cpu0) / n;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const rounds = Number(opt.rounds);
  const seconds = Number(opt.seconds);
  const asked = opt.parts === 'all' ? PARTS.map((p) => p.id) : opt.parts.split(',');
  const unknown = asked.filter((id) => !PARTS.some((p) => p.id === id));
  if (unknown.length > 0 || asked.length === 0) throw new Error(`--parts: ${unknown.length > 0 ? `no part ${unknown.map((u) => JSON.stringify(u)).join(', ')}` : 'none given'}; the parts are ${PARTS.map((p) => p.id).join(', ')}, or all`);
  const chosen = PARTS.filter((p) => asked.includes(p.id));
  const dist = build(chosen);
  const mock = await startChild([join(here, 'bench-proxy-mock.mjs')]);
  const floor = await startChild([join(here, 'bench-proxy-floor.mjs'), String(mock.port)]);
  const agent = () => new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 });
  const targets = [{ name: 'floor', ...floor, agent: agent(), per: [] }];
  targets.push({ name: 'whole', ...(await startProxy(dist, mock.port, '')), agent: agent(), per: [] });
  for (const p of chosen) targets.push({ name: p.id, part: p, ...(await startProxy(dist, mock.port, p.id)), agent: agent(), per: [] });
  // Every part at once: what is left is the proxy's core (dispatch, routing, the relay and its writes).
  if (chosen.length > 1) {
    const all = { name: 'all of the above at once', id: chosen.map((p) => p.id).join(','), what: "what is left is the core: the route table's dispatch, admission, routing, the relay and its writes" };
    targets.push({ name: 'all', part: all, ...(await startProxy(dist, mock.port, all.id)), agent: agent(), per: [] });
  }
  // Warm-up (JIT, connections), not counted.
  for (const t of targets) await burst(t, 1);
  const loadBefore = os.loadavg().map((x) => x.toFixed(1)).join(', ');
  const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  console.error(`${rounds} rounds of ${seconds} s bursts at c=32 per process (${targets.length} processes)…`);
  for (let r = 0; r < rounds; r++) {
    for (const t of r % 2 === 0 ? targets : [...targets].reverse()) t.per.push(await burst(t, seconds));
  }
  const [floorT, whole] = targets;
  const ratio = (t) => median(t.per.map((x, r) => x / floorT.per[r]));
  const us = (t) => median(t.per) * 1e6;
  const wholeRatio = ratio(whole);
  const rows = targets.slice(2).map((t) => {
    const r = ratio(t);
    return `| ${t.part.name} (${t.part.what}) | ${us(t).toFixed(1)} µs | ${r.toFixed(3)}× | ${((wholeRatio - r) * us(floorT)).toFixed(1)} µs (${(wholeRatio - r).toFixed(3)}× the floor) |`;
  });
  console.log(
    [
      `Command: \`node scripts/bench-proxy-parts.mjs${process.argv.slice(2).length > 0 ? ` ${process.argv.slice(2).join(' ')}` : ''}\`. ${started}, Node ${process.version}, ${os.availableParallelism()} cores; load average (1, 5, 15 min) before ${loadBefore}, after ${os.loadavg().map((x) => x.toFixed(1)).join(', ')}. ${rounds} interleaved rounds of ${seconds} s bursts at c=32 per process, chat requests to the instant mock; each figure is the median over the rounds (× the floor: of the ratio to the floor's CPU per request in the same round).`,
      '',
      `The floor (bare relay): ${us(floorT).toFixed(1)} µs per request. The whole proxy: ${us(whole).toFixed(1)} µs, ${wholeRatio.toFixed(3)}× the floor.`,
      '',
      '| switched off | CPU per request | × the floor | what it costs (the whole proxy less this) |',
      '|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
  for (const c of children) c.kill('SIGTERM');
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`bench-proxy-parts: ${e.message}`);
    process.exit(1);
  },
);
