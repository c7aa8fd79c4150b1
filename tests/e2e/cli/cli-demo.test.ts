// scripts/demo, run as a user runs it (with the built dist/): what it prints to try
// names the demo's real tunnels by their hashes, and the printed commands work.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO, port } from '../daemon-harness.js';

const TOKEN = 'demo-token-1234';
let demo: ChildProcess;
let printed = '';
let apiPort: number;

function sh(script: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    execFile('bash', ['-c', `exec 2>&1\n${script}`], { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 }, (e, stdout) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, output: stdout });
    });
  });
}

/** The command of a "Try:" line whose comment is `comment`. */
function tryLine(comment: string): string {
  const line = printed.split('\n').find((l) => l.endsWith(`# ${comment}`));
  if (line === undefined) throw new Error(`the demo printed no line "# ${comment}":\n${printed}`);
  return line.replace(/ +# .*$/, '').trim();
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  apiPort = await port();
  demo = spawn(process.execPath, [join(REPO, 'scripts/demo'), '--no-build', '--api-port', String(apiPort), '--panel-port', String(await port())], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', TUNNEL_API_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  demo.stderr?.on('data', (d) => (errors += String(d)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo printed no instructions within 45 s:\n${printed}\n${errors}`)), 45_000);
    demo.stdout?.on('data', (d) => {
      printed += String(d);
      if (printed.includes('web panel:')) {
        clearTimeout(timer);
        resolve();
      }
    });
    demo.once('exit', (code) => reject(new Error(`the demo exited (${code}):\n${printed}\n${errors}`)));
  });
}, 60_000);

afterAll(async () => {
  if (demo && demo.exitCode === null) {
    const exited = new Promise((r) => demo.once('exit', r));
    demo.kill('SIGINT');
    await exited;
  }
});

describe('scripts/demo', () => {
  it('prints the tunnels\' real hashes, not placeholders', async () => {
    expect(printed).not.toMatch(/<hash>|<[a-z-]+>/);
    const list = await sh(`${tryLine('both tunnels and their hashes')} --json`);
    expect(list.code, list.output).toBe(0);
    const hashes = new Map((JSON.parse(list.output) as { name: string; hash: string }[]).map((t) => [t.name, t.hash.slice(0, 8)]));
    expect([...hashes.keys()].sort()).toEqual(['bring-web', 'expose-web']);
    expect(tryLine('"bring-web" down, and up again')).toMatch(new RegExp(`stop-tunnel ${hashes.get('bring-web')} ; .* start-tunnel ${hashes.get('bring-web')}$`));
    expect(tryLine('the ssh output of "expose-web"')).toMatch(new RegExp(`logs ${hashes.get('expose-web')}$`));
  });

  it('its tunnel-cli lines run as printed', async () => {
    const bring = tryLine('"bring-web" down, and up again');
    const r = await sh(bring);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/^bring-web \([0-9a-f]{8}\): STOPPED\nbring-web \([0-9a-f]{8}\): RUNNING, up \d+s\n$/);
    const logs = await sh(tryLine('the ssh output of "expose-web"'));
    expect(logs.code, logs.output).toBe(0);
    expect(logs.output).not.toBe('');
  });

  it('its API lines carry the token when the daemon asks for one', async () => {
    const status = tryLine('status records');
    expect(status).toBe(`curl -H "Authorization: Bearer $TUNNEL_API_TOKEN" http://127.0.0.1:${apiPort}/status`);
    expect((await fetch(`http://127.0.0.1:${apiPort}/status`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${apiPort}/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('Ctrl-C stops everything', async () => {
    const exited = new Promise<number | null>((r) => demo.once('exit', (code) => r(code)));
    demo.kill('SIGINT');
    expect(await exited).toBe(0);
    expect((await sh(tryLine('their states'))).code).toBe(3);
  });
});
