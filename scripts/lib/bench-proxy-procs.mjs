// The processes of the proxy benchmarks (scripts/bench-proxy-kinds.mjs,
// scripts/bench-proxy-parts.mjs): helpers that print `{"port": N}`, the built product
// serving `/v1`, and the CPU time of a process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { ROOT } from './bench-common.mjs';

/** Starts `node <args>`, which prints `{"port": N}` on its first line; the child goes into `children`. */
export function startChild(args, children) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((ok, fail) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      if (buf.includes('\n')) ok({ child, port: JSON.parse(buf.split('\n')[0]).port });
    });
    child.once('exit', (code) => fail(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** A port nothing listens on now, on 127.0.0.1. */
export const freePort = () =>
  new Promise((ok) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/**
 * `tunnel-manager proxy` or `serve` from the build in `dist`, its config (one provider,
 * `bench`, at the upstream) in a fresh folder under `parent`, ready once `/v1/models`
 * answers. `env`: added to this process's. The child goes into `children`.
 */
export async function startProduct({ dist, command, upstreamPort, parent, children, env = {} }) {
  const dir = mkdtempSync(join(parent, 'config-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `tunnels: []\nproxy:\n  providers:\n    bench:\n      base_url: http://127.0.0.1:${upstreamPort}/v1\n`);
  const port = await freePort();
  const args = [join(dist, 'main.js'), command, '--config', config, '--listen', `127.0.0.1:${port}`];
  if (command === 'serve') args.push('--state-dir', join(dir, 'state'), '--socket', join(dir, 'api.sock'));
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'ignore', env: { ...process.env, TUNNEL_API_TOKEN: '', ...env } });
  children.push(child);
  for (let i = 0; i < 150; i++) {
    const up = await new Promise((ok) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/v1/models', agent: false }, (res) => (res.resume(), ok(res.statusCode === 200)));
      req.on('error', () => ok(false));
      req.end();
    });
    if (up) return { child, port, dir };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${command} from ${dist} did not answer on ${port}`);
}

/** CPU seconds (user + system) the process has used so far, from /proc. */
export function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
