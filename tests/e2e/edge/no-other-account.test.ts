// SPEC §6 "No other account": another account of the machine (made by the suite with
// useradd, acting through setpriv) gets nothing from the daemon's TCP listener, the
// proxy's or the panel's without a credential; tunnel-cli and the panel talk to no
// socket or server that another account owns. The owner (root here) needs nothing new.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, MAIN, port, startDaemon, type Daemon } from '../daemon-harness.js';
import { startPanelProcess } from '../panel-process.js';
import { curlAs, otherAccount, spawnAs, upgradeAs, type OtherAccount } from '../other-account.js';

let other: OtherAccount;
const dir = mkdtempSync(join(tmpdir(), 'tm-accounts-'));
const sshConfig = join(dir, 'ssh_config');
const CONFIG = 'tunnels:\n  - name: db\n    remote_host: nobody@127.0.0.1\n    remote_port: 5432\n    local_port: 15999\n';
const daemons: Daemon[] = [];
const children: ChildProcess[] = [];

beforeAll(() => {
  other = otherAccount();
  writeFileSync(sshConfig, '');
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(daemons.map((d) => d.cleanup()));
  rmSync(dir, { recursive: true, force: true });
});

async function daemon(config = CONFIG, env: Record<string, string> = {}): Promise<Daemon> {
  const d = await startDaemon({ config, sshConfigPath: sshConfig, env: { TUNNEL_API_TOKEN: '', ...env } });
  daemons.push(d);
  await d.waitFor('the first load', async () => ((await d.json('/health')) as { loading?: boolean }).loading === false);
  return d;
}

const refusedAccount = (r: { status: number; body: string }) => {
  expect(r.status).toBe(403);
  const e = JSON.parse(r.body).error;
  expect(e.code).toBe('account_not_allowed');
  expect(e.message).toContain(`uid ${other.uid} (${other.name})`);
  return e.message as string;
};

describe('the daemon without a token', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await daemon();
  });

  it('serves its owner as before', async () => {
    expect((await d.api('/status')).status).toBe(200);
    expect((await d.api('/v1/models')).status).toBe(200);
  });

  it('refuses another account every control route, the event stream, the metrics and /v1, whatever the method', async () => {
    const base = `http://127.0.0.1:${d.apiPort}`;
    const json = ['-H', 'content-type: application/json'];
    for (const [path, args] of [
      ['/status', []],
      ['/list', []],
      ['/config', []],
      ['/logs', []],
      ['/events', ['--max-time', '3']],
      ['/metrics', []],
      ['/stop', ['-X', 'POST']],
      ['/start', ['-X', 'POST']],
      ['/config/new', ['-X', 'POST', ...json, '-d', '{"remote_host":"x@y","remote_port":1,"local_port":2}']],
    ] as const) {
      const message = refusedAccount(await curlAs(other, base + path, [...args]));
      expect(message).toContain('TUNNEL_API_TOKEN');
      expect(message).toContain('TUNNEL_API_ALLOWED_USERS');
    }
    for (const [path, args] of [
      ['/v1/models', []],
      ['/v1/chat/completions', ['-X', 'POST', ...json, '-d', '{"model":"a:b","messages":[]}']],
      ['/v1/responses/resp_1', []],
    ] as const) {
      expect(refusedAccount(await curlAs(other, base + path, [...args]))).toContain('proxy.api_keys');
    }
    // Paths the router may read as another route need every credential they could meet.
    for (const path of ['/%761/models', '/list/../v1/models', '//status']) {
      const r = await curlAs(other, base + path, ['--path-as-is']);
      expect(refusedAccount(r)).toContain('TUNNEL_API_TOKEN');
    }
    // The tunnel is still running as the owner left it: the POST /stop changed nothing.
    const s = (await d.json('/status')) as { name: string; status: string }[];
    expect(s.map((t) => t.name)).toEqual(['db']);
    expect(s[0]!.status).not.toBe('STOPPED');
  });

  it('refuses another account the login terminal, sending the right headers or not', async () => {
    const hash = ((await d.json('/list')) as { hash: string }[])[0]!.hash;
    expect(await upgradeAs(other, `http://127.0.0.1:${d.apiPort}/auth/${hash}`)).toBe(403);
    expect(await upgradeAs(other, `http://127.0.0.1:${d.apiPort}/auth/${hash}`, { Origin: `http://127.0.0.1:${d.apiPort}` })).toBe(403);
  });

  it('answers /health to every account, with nothing but counts', async () => {
    const r = await curlAs(other, `http://127.0.0.1:${d.apiPort}/health`);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).ok).toBe(true);
  });
});

describe('credentials and named accounts let another account in', () => {
  it('with TUNNEL_API_TOKEN, another account is left to the token (401 without, 200 with); /v1 stays closed without proxy keys', async () => {
    const d = await daemon(CONFIG, { TUNNEL_API_TOKEN: 'owner-token' });
    const base = `http://127.0.0.1:${d.apiPort}`;
    expect((await curlAs(other, `${base}/status`)).status).toBe(401);
    expect((await curlAs(other, `${base}/status`, ['-H', 'authorization: Bearer owner-token'])).status).toBe(200);
    refusedAccount(await curlAs(other, `${base}/v1/models`, ['-H', 'authorization: Bearer owner-token']));
  });

  it('with proxy keys, another account is left to the keys on /v1', async () => {
    const d = await daemon(`${CONFIG}proxy:\n  api_keys: ["client-key"]\n  providers: {}\n`);
    const base = `http://127.0.0.1:${d.apiPort}`;
    expect((await curlAs(other, `${base}/v1/models`)).status).toBe(401);
    expect((await curlAs(other, `${base}/v1/models`, ['-H', 'authorization: Bearer client-key'])).status).toBe(200);
    refusedAccount(await curlAs(other, `${base}/status`));
  });

  it('TUNNEL_API_ALLOWED_USERS names accounts let in without a credential; a name no account has stops the start', async () => {
    const d = await daemon(CONFIG, { TUNNEL_API_ALLOWED_USERS: other.name });
    expect((await curlAs(other, `http://127.0.0.1:${d.apiPort}/status`)).status).toBe(200);
    const bad = spawn(process.execPath, [MAIN, '--config', join(dir, 'none.yaml'), '--listen', `127.0.0.1:${await port()}`, '--socket', join(dir, 'bad.sock'), '--state-dir', join(dir, 'bad-state')], {
      env: { ...process.env, TUNNEL_API_ALLOWED_USERS: 'no-such-account-here' },
    });
    let out = '';
    bad.stderr.on('data', (b) => (out += String(b)));
    const code = await new Promise((r) => bad.once('exit', r));
    expect(code).toBe(2);
    expect(out).toContain('TUNNEL_API_ALLOWED_USERS');
    expect(out).toContain('no-such-account-here');
  });
});

describe('tunnel-manager proxy and the panel', () => {
  it("tunnel-manager proxy refuses another account /v1 and /metrics without keys, and serves its owner", async () => {
    const config = join(dir, 'proxy.yaml');
    writeFileSync(config, 'tunnels: []\nproxy:\n  providers: {}\n');
    const p = await port();
    const child = spawn(process.execPath, [MAIN, 'proxy', '--config', config, '--listen', `127.0.0.1:${p}`], { stdio: 'ignore' });
    children.push(child);
    const base = `http://127.0.0.1:${p}`;
    for (let i = 0; i < 100 && !(await fetch(`${base}/v1/models`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${base}/v1/models`)).status).toBe(200);
    expect(refusedAccount(await curlAs(other, `${base}/v1/models`))).toContain('this model proxy');
    refusedAccount(await curlAs(other, `${base}/metrics`));
  });

  it('the panel without PANEL_TOKEN is its owner\'s alone: pages, API and terminal; with PANEL_TOKEN it asks for the password', async () => {
    const d = await daemon();
    const panel = await startPanelProcess(d, sshConfig);
    try {
      expect((await fetch(`${panel.url}/`)).status).toBe(200);
      refusedAccount(await curlAs(other, `${panel.url}/`));
      expect(refusedAccount(await curlAs(other, `${panel.url}/api/config`))).toContain('PANEL_TOKEN');
      refusedAccount(await curlAs(other, `${panel.url}/api/daemon/stop`, ['-X', 'POST', '-H', 'x-panel-request: 1', '-H', `origin: ${panel.url}`]));
      expect(await upgradeAs(other, `${panel.url}/api/terminal/abcd`, { Origin: panel.url })).toBe(403);
    } finally {
      await panel.stop();
    }
    const guarded = await startPanelProcess(d, sshConfig, { PANEL_TOKEN: 'panel-password' });
    try {
      const session = await curlAs(other, `${guarded.url}/api/session`);
      expect(session.status).toBe(200);
      expect(JSON.parse(session.body).password_required).toBe(true);
      expect((await curlAs(other, `${guarded.url}/api/config`)).status).toBe(401);
    } finally {
      await guarded.stop();
    }
  });
});

/** A server of the other account's that prints GOT when anything reaches it. */
function plantedServer(listen: string): Promise<ChildProcess> {
  const script = `const s=require('net').createServer((c)=>c.on('data',()=>{process.stdout.write('GOT\\n')}));s.listen(${listen},()=>process.stdout.write('LISTENING\\n'))`;
  const child = spawnAs(other, [process.execPath, '-e', script]);
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b) => {
      out += String(b);
      if (out.includes('LISTENING')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`the planted server exited (${code})`)));
  });
}

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TUNNEL_SOCKET: '', TUNNEL_API_URL: '', ...env } });
    let out = '';
    child.stdout.on('data', (b) => (out += String(b)));
    child.stderr.on('data', (b) => (out += String(b)));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('tunnel-cli and the panel talk only to what the user owns', () => {
  it('refuses a socket another account planted where tunnel-cli looks by default, and sends it nothing (status and auth)', async () => {
    // XDG_RUNTIME_DIR is a shared sticky folder here, as /tmp is when it is unset.
    for (const mode of [0o777, 0o700]) {
      const runtime = mkdtempSync(join(tmpdir(), 'tm-runtime-'));
      chmodSync(runtime, 0o1777);
      const planted = join(runtime, 'tunnel-manager');
      mkdirSync(planted);
      chownSync(planted, other.uid, other.gid);
      chmodSync(planted, mode);
      const server = await plantedServer(JSON.stringify(join(planted, 'api.sock')));
      let got = '';
      server.stdout!.on('data', (b) => (got += String(b)));
      for (const args of [['status'], ['auth', 'abcd1234']]) {
        const r = await cli(args, { XDG_RUNTIME_DIR: runtime });
        expect(r.code).toBe(3);
        expect(r.out).toContain(`belongs to uid ${other.uid} (${other.name})`);
      }
      await new Promise((r) => setTimeout(r, 200));
      expect(got).not.toContain('GOT');
      server.kill('SIGKILL');
      rmSync(runtime, { recursive: true, force: true });
    }
  });

  it("lets root use the socket it names of the daemon's own account (docker compose exec), in folders no third account can write", async () => {
    const base = mkdtempSync(join(tmpdir(), 'tm-named-'));
    chmodSync(base, 0o755);
    const folder = join(base, 'run');
    mkdirSync(folder, { mode: 0o700 });
    chownSync(folder, other.uid, other.gid);
    const sock = join(folder, 'api.sock');
    const script = `require('http').createServer((q,r)=>{r.setHeader('content-type','application/json');r.end('[]')}).listen(${JSON.stringify(sock)},()=>process.stdout.write('LISTENING\\n'))`;
    const child = spawnAs(other, [process.execPath, '-e', script]);
    children.push(child);
    await new Promise<void>((resolve) => child.stdout!.on('data', (b) => String(b).includes('LISTENING') && resolve()));
    const named = await cli(['--socket', sock, 'status']);
    expect(named.out).not.toContain('belongs to');
    expect(named.code).toBe(0);
    // The same socket in a folder any account may write is not the daemon's to vouch for.
    chmodSync(folder, 0o777);
    const open = await cli(['--socket', sock, 'status']);
    expect(open.code).toBe(3);
    expect(open.out).toContain(`the folder ${folder} is writable by other accounts`);
    child.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });

  it("refuses a socket of the user's own in a folder any account may write", async () => {
    let got = '';
    // A socket of the user's own, in a folder any account may write (and so swap it), is refused too.
    const open = mkdtempSync(join(tmpdir(), 'tm-open-'));
    chmodSync(open, 0o777);
    const own = net.createServer((c) => c.on('data', () => (got += 'GOT')));
    await new Promise<void>((r) => own.listen(join(open, 'api.sock'), r));
    const swapped = await cli(['--socket', join(open, 'api.sock'), 'status']);
    expect(swapped.code).toBe(3);
    expect(swapped.out).toContain(`the folder ${open} is writable by other accounts`);
    await new Promise<void>((r) => own.close(() => r()));
    expect(got).not.toContain('GOT');
    rmSync(open, { recursive: true, force: true });
    // And the daemon's own socket, in its own folder, serves as before.
    const d = await daemon();
    expect((await cli(['--socket', d.socketPath, 'status'])).code).toBe(0);
  });

  it("refuses a TCP server another account runs on the daemon's port, before the token is sent (CLI and panel)", async () => {
    const p = await port();
    const server = await plantedServer(`${p},'127.0.0.1'`);
    let got = '';
    server.stdout!.on('data', (b) => (got += String(b)));
    const r = await cli(['--url', `http://127.0.0.1:${p}`, 'status'], { TUNNEL_API_TOKEN: 'owner-token' });
    expect(r.code).toBe(3);
    expect(r.out).toContain(`runs as uid ${other.uid} (${other.name})`);
    const auth = await cli(['--url', `http://127.0.0.1:${p}`, 'auth', 'abcd1234'], { TUNNEL_API_TOKEN: 'owner-token' });
    expect(auth.code).toBe(3);
    expect(auth.out).toContain(`runs as uid ${other.uid}`);

    const d = await daemon();
    const panel = await startPanelProcess(d, sshConfig, { TUNNEL_API_TOKEN: 'owner-token' }, `http://127.0.0.1:${p}`);
    try {
      const res = await fetch(`${panel.url}/api/daemon/stop`, { method: 'POST', headers: { 'x-panel-request': '1' } });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('daemon_wrong_service');
      expect(body.error.message).toContain('another account');
    } finally {
      await panel.stop();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(got).not.toContain('GOT');
  });
});
