// Runs one container of deploy/kubernetes as a pod would, inside the network and mount
// namespace tests/deploy/kubernetes-pods.test.ts made for it: an sshd when asked, the
// image's entrypoint as the manifest's uid with the manifest's environment, then the
// kubelet's probe, then what `kubectl exec` would run. Prints one JSON line with what
// happened; ends everything it started.
import { spawn, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import process from 'node:process';
import { promisify } from 'node:util';
import { startSshd } from '../../scripts/lib/sshd.mjs';

const { fetch, AbortSignal } = globalThis;
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const run = promisify(execFile);
const asUser = ['setpriv', `--reuid=${spec.uid}`, `--regid=${spec.gid}`, `--groups=${spec.groups.join(',')}`, '--'];
const result = { probe: null, exec: null, status: null, log: '', exitCode: null };

const server = spec.sshd ? await startSshd(spec.sshd) : null;
const child = spawn(asUser[0], [...asUser.slice(1), 'sh', spec.entrypoint, ...spec.args], { env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
child.stdout.on('data', (d) => (result.log += String(d)));
child.stderr.on('data', (d) => (result.log += String(d)));
const exited = new Promise((r) => child.once('exit', (code) => r(code)));

/** The kubelet's probe: an HTTP GET that counts 200–399, or a TCP connection. */
async function probe() {
  const p = spec.probe;
  if (p.httpGet) {
    const res = await fetch(`http://${p.httpGet.host}:${p.httpGet.port}${p.httpGet.path}`, { signal: AbortSignal.timeout(2000) });
    return res.status >= 200 && res.status < 400 ? { status: res.status, body: await res.json() } : null;
  }
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port: p.tcpSocket.port });
    s.once('connect', () => {
      s.destroy();
      resolve({ connected: true });
    });
    s.once('error', () => resolve(null));
  });
}

async function until(what, fn) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the container exited (${child.exitCode}) while waiting for ${what}`);
    const v = await fn().catch(() => null);
    if (v) return v;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

try {
  result.probe = await until('the probe', probe);
  // Started, signal handlers in place: what the log says once the service is up.
  if (spec.waitLog) await until(spec.waitLog, async () => result.log.includes(spec.waitLog));
  if (spec.waitTunnel) {
    result.status = await until('the tunnels RUNNING', async () => {
      const all = await (await fetch(`http://127.0.0.1:${spec.probe.httpGet.port}/status`)).json();
      return all.length > 0 && all.every((t) => t.status === 'RUNNING') ? all : null;
    });
  }
  // kubectl exec: the container's user and environment, no entrypoint.
  result.exec = [];
  for (const argv of spec.exec ?? []) {
    const r = await run(asUser[0], [...asUser.slice(1), ...argv], { env: spec.env }).catch((e) => e);
    result.exec.push({ code: r.code ?? 0, stdout: r.stdout, stderr: r.stderr });
  }
} catch (e) {
  result.error = String(e);
} finally {
  child.kill('SIGTERM');
  result.exitCode = await exited;
  await server?.stop();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
