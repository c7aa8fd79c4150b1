// What every tunnel benchmark (scripts/bench-recovery, -detection, -reload, -scale,
// -datapath) shares: building dist/ when it is stale, the built daemon started as a
// user starts it, an echo service, timed round trips, machine facts and load, tables,
// and writing one section of BENCHMARKS.md. Every wait has a deadline; every child
// started here is ended on exit.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBecause } from '../build.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const MAIN = join(ROOT, 'dist/main.js');
export const CLI = join(ROOT, 'dist/cli/main.js');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- cleanup

const cleanups = [];
/** Registers a synchronous cleanup run on exit (also after SIGINT/SIGTERM or a crash). */
export function onExit(fn) {
  cleanups.push(fn);
}
let cleaned = false;
function runCleanups() {
  if (cleaned) return;
  cleaned = true;
  for (const fn of cleanups.reverse()) {
    try { fn(); } catch {}
  }
}
process.on('exit', runCleanups);
process.on('SIGINT', () => { runCleanups(); process.exit(130); });
process.on('SIGTERM', () => { runCleanups(); process.exit(143); });

// ---------------------------------------------------------------- build

/**
 * Runs `npm run build` when dist/ was not built from the sources as they are now (the
 * rule of scripts/build.mjs --if-needed). Another change being saved can make one build
 * fail: try a few times.
 */
export function ensureBuilt() {
  const stale = () => staleBecause(ROOT) !== null;
  if (!existsSync(join(ROOT, 'node_modules'))) {
    throw new Error('node_modules is missing: run `npm ci` first');
  }
  if (!stale()) return;
  for (let attempt = 1; attempt <= 4; attempt++) {
    console.error(`building dist/ (npm run build, attempt ${attempt})…`);
    const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status === 0 && existsSync(MAIN)) return;
    spawnSync('sleep', ['5']);
  }
  throw new Error('npm run build failed four times; fix the build and run again');
}

/** Makes sure a Debian package's binary exists (installing it with apt-get when root). */
export function ensureDebianTool(bin, pkg) {
  if (existsSync(bin)) return;
  if (process.getuid?.() !== 0) throw new Error(`${bin} is missing: install it with \`sudo apt-get install -y ${pkg}\``);
  console.error(`installing ${pkg} (apt-get)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const r = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { stdio: 'inherit', env });
  if (r.status !== 0 || !existsSync(bin)) throw new Error(`could not install ${pkg}; install it with \`apt-get install -y ${pkg}\``);
}

// ---------------------------------------------------------------- machine

/** Load averages (1, 5, 15 min) as `uptime` prints them. */
export function load() {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ');
}

export function machine() {
  const sshV = spawnSync('ssh', ['-V'], { encoding: 'utf8' });
  let commit = 'unknown';
  let dirty = '';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() ? ' (src/ has uncommitted changes)' : '';
  } catch {}
  return {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    openssh: (sshV.stderr || sshV.stdout).trim().split(',')[0],
    kernel: os.release(),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    commit: `${commit}${dirty}`,
  };
}

export function machineLine(m) {
  return `${m.nproc} cores (${m.cpu}), ${m.memGiB} GiB, Linux ${m.kernel}, Node ${m.node}, ${m.openssh}; commit ${m.commit}; ${m.date}`;
}

/**
 * Measures how long a small write + fsync takes in `dir` every `everyMs` until stopped:
 * the daemon fsyncs its state files on every ssh start and exit, so a disk busy with
 * other work shows up in tunnel timings. `stop()` resolves with the durations (ms).
 */
export function fsyncProbe(dir, everyMs = 250) {
  const times = [];
  let stopped = false;
  const path = join(dir, `.fsync-probe-${process.pid}`);
  const loop = (async () => {
    const { open, rm } = await import('node:fs/promises');
    while (!stopped) {
      const t0 = performance.now();
      const fh = await open(path, 'w');
      await fh.write('x'.repeat(512));
      await fh.sync();
      await fh.close();
      times.push(performance.now() - t0);
      await sleep(everyMs);
    }
    await rm(path, { force: true });
  })();
  return {
    async stop() {
      stopped = true;
      await loop.catch(() => {});
      return times;
    },
  };
}

// ---------------------------------------------------------------- numbers

export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}
export const median = (v) => percentile(v, 50);

export function ms(v, digits = 0) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  return `${v.toFixed(digits)} ms`;
}
export function secs(vMs, digits = 2) {
  if (vMs === null || vMs === undefined || Number.isNaN(vMs)) return '—';
  return `${(vMs / 1000).toFixed(digits)} s`;
}

/** A Markdown table (also readable on a terminal). */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c)));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(cells[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

// ---------------------------------------------------------------- BENCHMARKS.md

/**
 * Replaces the generated block of one section of BENCHMARKS.md (between
 * `<!-- <tag>:begin … -->` and `<!-- <tag>:end -->`), or adds the section. The file is
 * re-read right before writing: other benchmarks write their own sections of it.
 */
export function writeSection(heading, tag, body) {
  const file = join(ROOT, 'BENCHMARKS.md');
  const begin = `<!-- ${tag}:begin`;
  const end = `<!-- ${tag}:end -->`;
  const generated = `${begin} (written by scripts/${tag}; notes outside these markers are kept) -->\n${body.trim()}\n${end}`;
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const b = text.indexOf(begin);
  const e = text.indexOf(end);
  let next;
  const head = `\n## ${heading}\n`;
  if (b !== -1 && e > b) next = text.slice(0, b) + generated + text.slice(e + end.length);
  else if (text.includes(head)) {
    const at = text.indexOf(head) + head.length;
    next = `${text.slice(0, at)}\n${generated}\n${text.slice(at)}`;
  } else next = `${text.trimEnd()}\n\n## ${heading}\n\n${generated}\n`;
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, next.endsWith('\n') ? next : `${next}\n`);
  renameSync(tmp, file);
  console.error(`wrote the "## ${heading}" section of BENCHMARKS.md`);
}

// ---------------------------------------------------------------- ports

export function portIsFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive ports below the ephemeral range (32768+), each free on 127.0.0.1
 * right now, searched from `from` upwards.
 */
export async function freeBlock(count, from = 12000, below = 32768) {
  let start = from;
  for (let p = from; p < below; p++) {
    if (!(await portIsFree(p))) {
      start = p + 1;
      continue;
    }
    if (p - start + 1 === count) return start;
  }
  throw new Error(`no ${count} consecutive free ports between ${from} and ${below}`);
}

/** Resolves with the time (ms since epoch) something first accepts on host:port, polling every `everyMs`. */
export async function firstAccept(port, { host = '127.0.0.1', everyMs = 5, timeoutMs = 15_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host });
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return Date.now();
    await sleep(everyMs);
  }
  throw new Error(`nothing accepted on ${host}:${port} within ${timeoutMs} ms`);
}

// ---------------------------------------------------------------- echo

/** A TCP echo service on 127.0.0.1:port (the "remote service" behind -L tunnels). */
export async function echoServer(port, host = '127.0.0.1') {
  const sockets = new Set();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, resolve);
  });
  const close = () => new Promise((r) => { for (const s of sockets) s.destroy(); srv.close(() => r()); });
  onExit(() => srv.close());
  return { port, close };
}

/** One echo round trip through host:port; resolves true/false, never rejects. */
export function echoOnce(port, { host = '127.0.0.1', timeoutMs = 1_000, payload = 'ping\n' } = {}) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    let got = '';
    const done = (ok) => { clearTimeout(timer); s.destroy(); resolve(ok); };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('connect', () => s.write(payload));
    s.on('data', (d) => { got += d; if (got.length >= payload.length) done(got === payload); });
    s.once('error', () => done(false));
    s.once('close', () => done(got === payload));
  });
}

/**
 * Polls an echo round trip through `port` every `everyMs` until one succeeds; resolves
 * with the time it completed (ms since epoch) and how many attempts failed, or null
 * at the deadline.
 */
export async function firstEcho(port, { everyMs = 20, deadline, attemptTimeoutMs = 1_000, signal } = {}) {
  let failed = 0;
  while (Date.now() < deadline && !signal?.aborted) {
    if (await echoOnce(port, { timeoutMs: attemptTimeoutMs })) return { at: Date.now(), failed };
    failed++;
    await sleep(everyMs);
  }
  return null;
}

// ---------------------------------------------------------------- the daemon

/** GET over TCP; resolves { status, body, ms }. */
export function httpGet(port, path, { timeoutMs = 10_000 } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`GET ${path} took over ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/**
 * Starts the built daemon (`node dist/main.js`) with its config written at
 * `<dir>/config/config.yaml`. `nodeArgs` go before the script (e.g. --cpu-prof).
 * Its stderr (JSON log lines) is kept up to a bounded tail.
 */
export async function startDaemon({ dir, config, sshConfigPath, sshBin, apiPort: wantedPort, main = MAIN, nodeArgs = [], env = {}, startTimeoutMs = 20_000, onLogLine }) {
  const configPath = join(dir, 'config', 'config.yaml');
  const socketPath = join(dir, 'run', 'api.sock');
  const stateDir = join(dir, 'state');
  mkdirSync(dirname(configPath), { recursive: true });
  mkdirSync(dirname(socketPath), { recursive: true });
  writeFileSync(configPath, config);
  const apiPort = wantedPort ?? (await freeBlock(1, 10000 + Math.floor(Math.random() * 2000)));
  const argv = [
    ...nodeArgs,
    main,
    '--config', configPath,
    '--listen', `127.0.0.1:${apiPort}`,
    '--socket', socketPath,
    '--state-dir', stateDir,
    '--ssh-config', sshConfigPath,
    ...(sshBin ? ['--ssh-bin', sshBin] : []),
  ];
  const child = spawn(process.execPath, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let tail = '';
  let partial = '';
  const keep = (d) => { tail = (tail + d).slice(-200_000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', (d) => {
    keep(d);
    if (!onLogLine) return;
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onLogLine(line);
  });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r(code ?? sig)));
  // A daemon killed with -9 cannot end its ssh children: end them by their argv,
  // which names the state dir (its known_hosts file).
  onExit(() => {
    try { child.kill('SIGKILL'); } catch {}
    killAll(processesWith(stateDir));
  });

  let seq = 0;
  const d = {
    dir, configPath, socketPath, stateDir, apiPort, child,
    get pid() { return child.pid; },
    log: () => tail,
    get: (path, opts) => httpGet(apiPort, path, opts),
    async json(path) {
      const r = await httpGet(apiPort, path);
      if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.slice(0, 300)}`);
      return JSON.parse(r.body);
    },
    async status() { return d.json('/status'); },
    /** Saves the config as editors do: a temp file in the same folder renamed over it. Returns the time of the rename. */
    writeConfig(text) {
      const tmp = join(dirname(configPath), `.config.yaml.${process.pid}.${seq++}.tmp`);
      writeFileSync(tmp, text);
      const at = Date.now();
      renameSync(tmp, configPath);
      return at;
    },
    /** Polls /status every `everyMs` until `pred(records)` holds; resolves with the records. */
    async waitStatus(what, pred, { timeoutMs = 30_000, everyMs = 100 } = {}) {
      const deadline = Date.now() + timeoutMs;
      let last;
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`the daemon exited while waiting for ${what}:\n${tail.slice(-3000)}`);
        try {
          last = await d.status();
          if (pred(last)) return last;
        } catch {}
        await sleep(everyMs);
      }
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last?.slice?.(0, 3))}`);
    },
    /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
  d.spawnedAt = Date.now();
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited at start:\n${tail}`);
    try {
      if ((await httpGet(apiPort, '/health', { timeoutMs: 10_000 })).status === 200) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`the daemon's API did not answer within ${startTimeoutMs} ms:\n${tail}`);
    await sleep(50);
  }
  return d;
}

/**
 * Subscribes to the daemon's /events stream; keeps every record with its arrival
 * time (status changes a poll would miss). `close()` ends it.
 */
export function recordEvents(port) {
  const events = [];
  const listeners = new Set();
  let buf = '';
  const req = http.get({ host: '127.0.0.1', port, path: '/events', agent: false }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (data === '') continue;
        try {
          const ev = { at: Date.now(), data: JSON.parse(data) };
          events.push(ev);
          if (events.length > 50_000) events.splice(0, 10_000);
          for (const l of listeners) l(ev);
        } catch {}
      }
    });
  });
  req.on('error', () => {});
  const opened = new Promise((resolve) => req.once('response', resolve));
  return {
    events,
    opened,
    /** Resolves with the first event (from now on) for which `pred` holds, or null after `timeoutMs`. */
    next(pred, timeoutMs) {
      return new Promise((resolve) => {
        const l = (ev) => { if (pred(ev.data)) { clearTimeout(t); listeners.delete(l); resolve(ev); } };
        const t = setTimeout(() => { listeners.delete(l); resolve(null); }, timeoutMs);
        listeners.add(l);
      });
    },
    close() { req.destroy(); },
  };
}

/** One `tunnels:` list entry. */
export function tunnelYaml(t) {
  return [
    `  - name: ${JSON.stringify(t.name)}`,
    `    remote_host: ${JSON.stringify(t.remote_host)}`,
    `    remote_port: ${JSON.stringify(String(t.remote_port))}`,
    `    local_port: ${JSON.stringify(String(t.local_port))}`,
    `    direction: ${t.direction ?? 'remote_to_local'}`,
    ...(t.shared === false ? ['    shared: false'] : []),
    '',
  ].join('\n');
}

export function configYaml(tunnels) {
  return tunnels.length === 0 ? 'tunnels: []\n' : `tunnels:\n${tunnels.map(tunnelYaml).join('')}`;
}

// ---------------------------------------------------------------- processes

/** utime+stime of a process in clock ticks, or null when it is gone. */
export function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** utime+stime+cutime+cstime (the process and its reaped children), in clock ticks, or null. */
export function cpuTicksWithChildren(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    return null;
  }
}

/** Busy and total clock ticks of the whole machine since boot (/proc/stat). */
export function machineTicks() {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { return 100; }
})();

/** Resident set size (kB) of one process from /proc/<pid>/status, or null. */
export function rssKb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Proportional (Pss) and private memory (kB) of one process from smaps_rollup, or null. */
export function pssKb(pid) {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const get = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? 0);
    return { pss: get('Pss'), priv: get('Private_Clean') + get('Private_Dirty') };
  } catch {
    return null;
  }
}

/** pids of the direct children of `pid`. */
export function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** pids of processes whose argv contains `marker` (e.g. a temp folder path) and whose argv[0] ends with `name`. */
export function processesWith(marker, name = 'ssh') {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if ((argv[0] ?? '').endsWith(name) && argv.some((a) => a.includes(marker))) out.push(Number(entry));
    } catch {}
  }
  return out;
}

/** Ends a scripts/lib/sshd.mjs server (listener and sessions) when this process exits. */
export function guardSshd(handle) {
  onExit(() => killAll([handle.pid, ...handle.allPids()]));
  return handle;
}

export function killAll(pids, signal = 'SIGKILL') {
  for (const p of pids) { try { process.kill(p, signal); } catch {} }
}

/**
 * A wrapper around ssh that appends `<epoch seconds> <argv>` to `logPath` for every
 * start, then execs the real ssh (same pid, so supervision is unchanged). Used to
 * count login attempts of ours and autossh's while the server is down.
 */
export function countingSsh(dir, logPath, name = 'ssh-counting', realSsh = '/usr/bin/ssh') {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho "$(date +%s.%N) $*" >> '${logPath}'\nexec '${realSsh}' "$@"\n`, { mode: 0o755 });
  return path;
}

/** Login attempts recorded by countingSsh() in [fromMs, toMs), ignoring `ssh -G` look-ups. */
export function countStarts(logPath, fromMs, toMs) {
  let n = 0;
  for (const line of (existsSync(logPath) ? readFileSync(logPath, 'utf8') : '').split('\n')) {
    const m = /^(\d+\.\d+) (.*)$/.exec(line);
    if (!m) continue;
    const t = Number(m[1]) * 1000;
    if (/(^| )-G( |$)/.test(m[2])) continue;
    if (t >= fromMs && t < toMs) n++;
  }
  return n;
}
