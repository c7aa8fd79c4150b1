// Summarises a .cpuprofile written by `scripts/bench-proxy --profile`: where the proxy
// process spent its CPU time, by function and by file.
//
//   node scripts/bench-proxy-profile.mjs test-artifacts/bench-proxy/profile/node.cpuprofile [top]
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!file) {
  console.error('usage: node scripts/bench-proxy-profile.mjs <file.cpuprofile> [top]');
  process.exit(2);
}
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i] ?? 0;
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self].filter(([id]) => ['(idle)', '(program)', '(garbage collector)'].includes(byId.get(id).callFrame.functionName));
const fn = new Map();
const files = new Map();
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const short = url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/test-artifacts\/bench-proxy\/build\//, 'src/') || '(native)';
  const key = `${functionName || '(anonymous)'}  ${short}:${lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + us);
  files.set(short, (files.get(short) ?? 0) + us);
}
const pctOf = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;

/** A coarse kind for a frame, to say where the busy time goes. */
function kindOf({ functionName: fn, url }) {
  if (['writev', 'writeUtf8String', 'writeLatin1String', 'writeBuffer'].includes(fn)) return 'socket writes (the syscall, with loopback delivery)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(program)') return 'V8 and libuv outside JS';
  if (/\/build\/proxy\//.test(url) || /\/src\/proxy\//.test(url)) return 'the proxy\'s own code (src/proxy)';
  if (/hono/.test(url)) return 'Hono and @hono/node-server';
  if (/node:_http|node:http\b/.test(url)) return 'node:http (the server clients talk to)';
  if (/streams|stream_base|node:net/.test(url)) return 'node streams and sockets';
  if (/events|task_queues|timers|promises/.test(url)) return 'events, ticks and timers';
  return 'other';
}
const kinds = new Map();
let busy = 0;
for (const [id, us] of self) {
  const frame = byId.get(id).callFrame;
  if (frame.functionName === '(idle)') continue;
  busy += us;
  const k = kindOf(frame);
  kinds.set(k, (kinds.get(k) ?? 0) + us);
}
console.log(`${(total / 1e6).toFixed(2)} s sampled; ${idle.map(([id, us]) => `${byId.get(id).callFrame.functionName} ${pctOf(us).trim()}`).join(', ')}`);
console.log(`\nbusy time by kind (${(busy / 1e6).toFixed(2)} s busy):`);
for (const [k, us] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`${((100 * us) / busy).toFixed(0).padStart(4)}%  ${k}`);
console.log('\nby function (self time):');
for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pctOf(us)}  ${k}`);
console.log('\nby file (self time):');
for (const [k, us] of [...files].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pctOf(us)}  ${k}`);
