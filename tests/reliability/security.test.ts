// Security: nothing a config file, the API, the panel or the proxy accepts can run a
// command or add an ssh option (checked on the argv of the live ssh children, read
// from /proc); the token guards the TCP control routes and nothing else; the socket
// is private; the panel refuses foreign origins; secrets never leave the process in
// a response or a log line.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import type { ApiErrorBody, HealthBody, HealthConfig, HealthDetails, StatusRecord } from '../../src/api/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAIN,
  argvOf,
  echoServer,
  port,
  roundTrip,
  sleep,
  socketRequest,
  sshChildren,
  sshd,
  startDaemon,
  until,
  type Daemon,
  type Sshd,
} from './helpers.js';

const TOKENS = ['tok-control-7f3a9c2e51b84d6f', 'tok-rotated-0b1c2d3e4f5a6b7c'];
const PROXY_KEY = 'pk-client-5e6f7a8b9c0d1e2f';
const UPSTREAM_KEY = 'uk-upstream-a1b2c3d4e5f60718';
const INLINE_KEY = 'uk-inline-99887766554433221100';
const WRONG_TOKEN = 'tok-wrong-deadbeefdeadbeef';
const SECRETS = [...TOKENS, PROXY_KEY, UPSTREAM_KEY, INLINE_KEY, WRONG_TOKEN];

let server: Sshd;
let echo: { close(): Promise<void> };
let echoPort: number;
let marker: string;
let d: Daemon;
let lPort: number;
let upstream: http.Server;
let upstreamPort: number;
let silent: http.Server;
let silentPort: number;
const upstreamAuth: string[] = [];
/** Every response body and header seen by this file, checked for secrets at the end. */
const seen: string[] = [];

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const res = await d.api(path, init);
  const body = await res.clone().text();
  seen.push(JSON.stringify([...res.headers.entries()]), body);
  return res;
}

function listen(srv: http.Server): Promise<number> {
  return new Promise((r) => srv.listen(0, '127.0.0.1', () => r((srv.address() as { port: number }).port)));
}

let base: string;

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
  lPort = await port();
  marker = join(server.dir, 'pwned');
  upstream = http.createServer((req, res) => {
    upstreamAuth.push(String(req.headers.authorization));
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm1', object: 'model', owned_by: 'me' }] }));
        return;
      }
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'upstream says no', type: 'invalid_request_error', code: 'invalid_api_key' } }));
    });
  });
  upstreamPort = await listen(upstream);
  // Accepts and never answers: the proxy's timeout must fire.
  silent = http.createServer(() => undefined);
  silentPort = await listen(silent);
  const downPort = await port();

  base = [
    'tunnels:',
    // A name that looks like an option is just a name: it never reaches ssh.
    `  - name: "-oProxyCommand=touch ${marker}"`,
    `    remote_host: ${server.alias}`,
    `    remote_port: ${echoPort}`,
    `    local_port: "127.0.0.1:${lPort}"`,
    '    direction: remote_to_local',
    // An unknown key is kept and warned about, never used.
    `    ProxyCommand: touch ${marker}`,
    '    ssh_options:',
    '      ServerAliveInterval: 7',
    '      Ciphers: aes128-ctr,aes256-ctr',
    'proxy:',
    '  default_timeout: 30',
    '  api_keys: ["${SEC_PROXY_KEY}"]',
    '  providers:',
    '    up:',
    `      base_url: http://127.0.0.1:${upstreamPort}/v1`,
    '      api_key: ${SEC_UPSTREAM_KEY}',
    '    down:',
    `      base_url: http://127.0.0.1:${downPort}/v1`,
    '      api_key: ${SEC_UPSTREAM_KEY}',
    '    unset:',
    `      base_url: http://127.0.0.1:${upstreamPort}/v1`,
    '      api_key: ${SEC_NOT_SET_ANYWHERE}',
    '    slow:',
    `      base_url: http://127.0.0.1:${silentPort}/v1`,
    '      api_key: ${SEC_UPSTREAM_KEY}',
    '      timeout: 1',
    '',
  ].join('\n');
  d = await startDaemon({
    config: base,
    sshConfigPath: server.sshConfigPath,
    env: { TUNNEL_API_TOKEN: TOKENS.join(','), SEC_PROXY_KEY: PROXY_KEY, SEC_UPSTREAM_KEY: UPSTREAM_KEY },
  });
  await until('the tunnel RUNNING', async () => {
    const all = (await (await d.api('/status', { headers: auth(TOKENS[0]!) })).json()) as StatusRecord[];
    return all[0]?.status === 'RUNNING';
  }, 20_000);
});

afterAll(async () => {
  await d?.cleanup();
  await echo?.close();
  await server?.stop();
  upstream?.closeAllConnections();
  upstream?.close();
  silent?.closeAllConnections();
  silent?.close();
});

// The suite's config has one tunnel, so the list is never empty.
const status = async () => (await (await call('/status', { headers: auth(TOKENS[0]!) })).json()) as [StatusRecord, ...StatusRecord[]];
// Read once the daemon has loaded its file (the harness waits for it): `config` is set.
const health = async () => (await (await call('/health')).json()) as HealthBody & { config: NonNullable<HealthBody['config']> };
// What /health leaves out, behind the token.
const details = async () => (await (await call('/health/details', { headers: auth(TOKENS[0]!) })).json()) as HealthDetails & { config: HealthConfig };
type OpenAiError = { error: { message: string } };

describe('no command, no injected ssh option', () => {
  it('the live ssh child gets only the daemon\'s own options and the allow-listed ones, and the destination right after --', async () => {
    const [t] = await status();
    expect(t.status).toBe('RUNNING');
    const argv = argvOf(t.pid!)!;
    expect(argv).not.toBeNull();
    expect(argv[0]).toMatch(/(^|\/)ssh$/);
    // The destination is the last argument, right after the only --.
    expect(argv.filter((a) => a === '--')).toEqual(['--']);
    expect(argv.indexOf('--')).toBe(argv.length - 2);
    expect(argv[argv.length - 1]).toBe(server.alias);
    // Before --: only -N, -F file, -o key=value and one forward.
    // A shared tunnel's ssh is its connection's master (SPEC §14): ControlPersist=no too.
    const allowed = new Set(['ControlPersist', 'LogLevel', 'ControlMaster', 'ControlPath', 'RequestTTY', 'ExitOnForwardFailure', 'BatchMode', 'ServerAliveInterval', 'ServerAliveCountMax', 'ConnectTimeout', 'StrictHostKeyChecking', 'UserKnownHostsFile', 'Ciphers']);
    const forwards: string[] = [];
    for (let i = 1; i < argv.length - 2; i++) {
      const a = argv[i]!;
      if (a === '-N') continue;
      if (a === '-F') {
        // The daemon's own ssh config (safety options for jump hops), which Includes the user's.
        const daemonConfig = readFileSync(argv[++i]!, 'utf8');
        expect(daemonConfig).toMatch(/^# Written by tunnel-manager/);
        expect(daemonConfig).toContain(`Include "${server.sshConfigPath}"`);
        continue;
      }
      if (a === '-L' || a === '-R') { forwards.push(`${a} ${argv[++i]}`); continue; }
      expect(a).toBe('-o');
      const opt = argv[++i]!;
      expect(opt).toMatch(/^[A-Za-z]+=/);
      expect(allowed.has(opt.split('=')[0]!)).toBe(true);
      expect(opt).not.toMatch(/[\n\r\0]/);
    }
    if (t.connection === null) {
      expect(forwards).toEqual([`-L 127.0.0.1:${lPort}:localhost:${echoPort}`]);
    } else {
      // The master carries no forward of its own; each is added with ssh -O forward.
      expect(forwards).toEqual([]);
      expect(argv.slice(0, 7)).toEqual([argv[0], '-o', 'ControlMaster=yes', '-o', `ControlPath=${join(d.stateDir, 'mux', t.connection.id)}`, '-o', 'ControlPersist=no']);
    }
    // The config's values came first, so they win over the defaults.
    expect(argv.find((a) => a.startsWith('ServerAliveInterval='))).toBe('ServerAliveInterval=7');
    expect(argv.some((a) => a.includes('ProxyCommand') || a.includes(marker))).toBe(false);
    expect(await roundTrip(lPort, 'legit')).toBe('legit');
    expect(existsSync(marker)).toBe(false);
  });

  const hostile = (over: string[]) => base.replace(/ {2}- name:[\s\S]*?(?=proxy:)/, `  - name: evil\n${over.map((l) => `    ${l}`).join('\n')}\n`);
  const field = (k: string, v: string) => `${k}: ${JSON.stringify(v)}`;
  const tunnel = (o: Record<string, string>) => {
    const f = { remote_host: server.alias, remote_port: String(echoPort), local_port: String(lPort + 1), direction: 'remote_to_local', ...o };
    return Object.entries(f).map(([k, v]) => field(k, v));
  };
  const CASES: Array<[string, () => string, RegExp]> = [
    ['remote_host starting with -', () => hostile(tunnel({ remote_host: `-oProxyCommand=touch ${marker}` })), /remote_host/],
    ['remote_host with a newline and an option', () => hostile(tunnel({ remote_host: `${server.alias}\n-oProxyCommand=touch ${marker}` })), /remote_host/],
    ['remote_host with a space and an option', () => hostile(tunnel({ remote_host: `${server.alias} -oProxyCommand=touch${marker}` })), /remote_host/],
    ['remote_port "1 -oX"', () => hostile(tunnel({ remote_port: `1 -oProxyCommand=touch ${marker}` })), /remote_port/],
    ['local_port starting with -', () => hostile(tunnel({ local_port: `-oProxyCommand=touch ${marker}` })), /local_port/],
    ['local_port with a newline', () => hostile(tunnel({ local_port: `${lPort + 1}\n-oProxyCommand=touch ${marker}` })), /local_port/],
    ['ssh_options ProxyCommand', () => hostile([...tunnel({}), 'ssh_options:', `  ProxyCommand: touch ${marker}`]), /ProxyCommand/],
    ['ssh_options LocalCommand with PermitLocalCommand', () => hostile([...tunnel({}), 'ssh_options:', `  PermitLocalCommand: "yes"`, `  LocalCommand: touch ${marker}`]), /LocalCommand/],
    ['ssh_options KnownHostsCommand', () => hostile([...tunnel({}), 'ssh_options:', `  KnownHostsCommand: /bin/sh -c "touch ${marker}"`]), /KnownHostsCommand/],
    ['ssh_options Match exec', () => hostile([...tunnel({}), 'ssh_options:', `  Match: exec "touch ${marker}"`]), /Match/],
    ['ssh_options value with a newline', () => hostile([...tunnel({}), 'ssh_options:', `  ServerAliveInterval: "5\\nProxyCommand touch ${marker}"`]), /ServerAliveInterval/],
    ['ssh_options value with a space', () => hostile([...tunnel({}), 'ssh_options:', `  IdentityFile: "x -oProxyCommand=touch${marker}"`]), /IdentityFile/],
    ['top-level ssh_options ProxyCommand', () => `ssh_options:\n  ProxyCommand: touch ${marker}\n` + hostile(tunnel({})), /ProxyCommand/],
  ];
  it.each(CASES)('%s: the file is refused, the running child is untouched, nothing runs', async (_what, text, fieldName) => {
    const before = await status();
    const children = sshChildren(d.dir);
    d.writeConfig(text());
    const h = await until('the config refused', async () => {
      const body = await details();
      return body.config.valid === false ? body : undefined;
    }, 10_000);
    expect(h.config.error).toMatch(fieldName);
    expect(h.config.error).toMatch(/line \d+, column \d+/);
    // Without the token, /health says there are problems, and nothing they are about.
    const open = await (await call('/health')).text();
    expect(JSON.parse(open)).toMatchObject({ ok: true, config: { valid: false, missing: false } });
    expect(open).not.toMatch(fieldName);
    expect(open).not.toMatch(/line \d|column|tunnels\[|pwned|\.yaml/);
    expect(open).not.toContain(server.alias);
    await sleep(300);
    expect(sshChildren(d.dir)).toEqual(children);
    expect((await status()).map((t) => [t.name, t.pid, t.status])).toEqual(before.map((t) => [t.name, t.pid, t.status]));
    expect(existsSync(marker)).toBe(false);
    d.writeConfig(base);
    await until('valid again', async () => (await health()).config.valid === true, 10_000);
  });

  it('API input that looks like an option is refused before any ssh is started', async () => {
    const children = sshChildren(d.dir);
    for (const path of ['/start/-oProxyCommand=x', `/start/${encodeURIComponent(`abcd -oProxyCommand=touch ${marker}`)}`, '/stop/%2D%2Doption']) {
      const res = await call(path, { method: 'POST', headers: auth(TOKENS[0]!) });
      expect(res.status).toBe(400);
    }
    expect(sshChildren(d.dir)).toEqual(children);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('token (SPEC §6)', () => {
  const CONTROL: Array<[string, string]> = [
    ['GET', '/list'], ['GET', '/status'], ['POST', '/start'], ['POST', '/stop'], ['POST', '/start/abcd'], ['POST', '/stop/abcd'],
    ['GET', '/logs/abcd'], ['POST', '/reload'], ['GET', '/events'], ['GET', '/metrics'],
  ];

  it.each(CONTROL)('%s %s over TCP needs the token: none, a wrong one and the proxy key get 401', async (method, path) => {
    const before = await status();
    for (const headers of [{}, auth(WRONG_TOKEN), auth(PROXY_KEY), { authorization: TOKENS[0]! }, { authorization: `Basic ${TOKENS[0]}` }]) {
      const res = await call(path, { method, headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as ApiErrorBody).error.code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    // Nothing was started or stopped by the refused calls.
    expect((await status()).map((t) => [t.pid, t.status])).toEqual(before.map((t) => [t.pid, t.status]));
  });

  it('every configured token works (rotation), on the control routes only', async () => {
    for (const t of TOKENS) {
      const res = await call('/list', { headers: auth(t) });
      expect(res.status).toBe(200);
    }
  });

  it('/health is open and reveals no tunnel, host or path: whether the config is usable, and counts', async () => {
    const res = await call('/health');
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toBe('{"ok":true,"loading":false,"config":{"valid":true,"error":null,"missing":false,"problems":0},"tunnels":1,"running":1}');
    // The rest is a control route: the token's.
    expect((await call('/health/details')).status).toBe(401);
  });

  it('path tricks do not reach a control route without the token', async () => {
    for (const path of ['/health/../status', '/v1/../status', '/v1/..%2Fstatus', '/v1%2F..%2Fstatus', '/./status', '//status', '/status/', '/STATUS', '/health%2F..%2Fstatus', '/%2e%2e/status']) {
      const body = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: d.apiPort, path, method: 'GET' }, (res) => {
          let b = '';
          res.on('data', (c) => (b += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
        });
        req.on('error', reject);
        req.end();
      });
      seen.push(body.body);
      expect({ path, status: body.status }).not.toEqual({ path, status: 200 });
      expect(body.body).not.toMatch(/remote_host|RUNNING/);
    }
  });

  it('/v1 is guarded by proxy.api_keys, never by TUNNEL_API_TOKEN', async () => {
    expect((await call('/v1/models')).status).toBe(401);
    expect((await call('/v1/models', { headers: auth(TOKENS[0]!) })).status).toBe(401);
    const ok = await call('/v1/models', { headers: auth(PROXY_KEY) });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { data: { id: string }[] }).data.map((m: { id: string }) => m.id)).toContain('up:m1');
  });

  it('the unix socket needs no token and is mode 0600 in a private folder', async () => {
    const st = statSync(d.socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(statSync(join(d.socketPath, '..')).mode & 0o077).toBe(0);
    const r = await socketRequest(d.socketPath, 'GET', '/status');
    expect(r.status).toBe(200);
    seen.push(r.body);
    expect(JSON.parse(r.body)[0].status).toBe('RUNNING');
  });
});

describe('secrets stay inside', () => {
  const chat = (model: string, key = PROXY_KEY) =>
    call('/v1/chat/completions', { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });

  it('the upstream key is sent upstream, and no proxy answer carries it (passthrough error, down, unset variable, timeout)', async () => {
    const passthrough = await chat('up:m1');
    expect(passthrough.status).toBe(401);
    expect(((await passthrough.json()) as OpenAiError).error.message).toBe('upstream says no');
    expect(upstreamAuth).toContain(`Bearer ${UPSTREAM_KEY}`);

    const down = await chat('down:m1');
    expect(down.status).toBe(502);
    const unset = await chat('unset:m1');
    expect(unset.status).toBe(500);
    expect(((await unset.json()) as OpenAiError).error.message).toMatch(/SEC_NOT_SET_ANYWHERE/);
    const slow = await chat('slow:m1');
    expect(slow.status).toBe(504);
    expect((await call('/v1/models', { headers: auth(PROXY_KEY) })).status).toBe(200);
    expect((await chat('up:m1', WRONG_TOKEN)).status).toBe(401);
  });

  it('control answers carry no secret: list, status, logs, metrics, events', async () => {
    const [t] = await status();
    for (const path of ['/list', '/status', `/logs/${t.hash}`, '/metrics']) {
      expect((await call(path, { headers: auth(TOKENS[1]!) })).status).toBe(200);
    }
    const ctrl = new AbortController();
    const res = await d.api('/events', { headers: auth(TOKENS[0]!), signal: ctrl.signal });
    const reader = res.body!.getReader();
    const first = await reader.read();
    seen.push(new TextDecoder().decode(first.value));
    ctrl.abort();
  });

  it('an invalid proxy section with an inline key or credentials in base_url: /health/details names the field, never the secret; /health not even the field', async () => {
    const inline = base.replace('      api_key: ${SEC_UPSTREAM_KEY}\n    down:', `      api_key: ${INLINE_KEY}\n      timeout: -1\n      api_keys_extra: ${INLINE_KEY}\n    down:`);
    const numeric = base.replace('      api_key: ${SEC_UPSTREAM_KEY}\n    down:', '      api_key: 998877665544332211\n    down:');
    // Credentials in the URL itself: user:password@ or a query (which makes it invalid).
    const inUrl = base.replace(`base_url: http://127.0.0.1:${upstreamPort}/v1\n      api_key: \${SEC_UPSTREAM_KEY}\n    down:`, `base_url: "http://me:${INLINE_KEY}@127.0.0.1:${upstreamPort}/v1?key=${INLINE_KEY}"\n    down:`);
    expect(inUrl).not.toBe(base);
    for (const text of [inline, numeric, inUrl]) {
      // From a valid file each time, so that the problem read is this file's.
      d.writeConfig(base);
      await until('valid', async () => (await health()).config.valid === true, 10_000);
      d.writeConfig(text);
      const h = await until('refused', async () => {
        const body = await details();
        return body.config.valid === false ? body : undefined;
      }, 10_000);
      expect(h.config.error).toMatch(/proxy\.providers\.up\.(timeout|api_key|base_url)/);
      expect(JSON.stringify(await health())).not.toMatch(/proxy|providers|998877665544332211/);
      expect(JSON.stringify(h)).not.toContain(INLINE_KEY);
      expect(JSON.stringify(h)).not.toContain('998877665544332211');
      const st = await call('/status', { headers: auth(TOKENS[0]!) });
      expect(await st.text()).not.toContain(INLINE_KEY);
    }
    d.writeConfig(base);
    await until('valid again', async () => (await health()).config.valid === true, 10_000);
  });

  it('no response body or header seen in this file holds a token or key', () => {
    expect(seen.length).toBeGreaterThan(50);
    const all = seen.join('\n');
    for (const s of SECRETS) expect(all).not.toContain(s);
    expect(all).not.toContain('998877665544332211');
  });

  it('the daemon\'s log output holds no token or key', () => {
    const log = d.stderr();
    expect(log.length).toBeGreaterThan(0);
    for (const s of SECRETS) expect(log).not.toContain(s);
    expect(log).not.toContain('998877665544332211');
  });
});

describe('panel', () => {
  let panel: ChildProcess;
  let panelPort: number;
  let panelLog = '';
  let origin: string;

  beforeAll(async () => {
    panelPort = await port();
    origin = `http://127.0.0.1:${panelPort}`;
    panel = spawn(process.execPath, [MAIN, 'panel', '--listen', `127.0.0.1:${panelPort}`, '--config', d.configPath, '--api', `http://127.0.0.1:${d.apiPort}`, '--ssh-config', server.sshConfigPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TUNNEL_API_TOKEN: TOKENS[0]!, PANEL_TOKEN: '' },
    });
    panel.stdout!.on('data', (c) => (panelLog += String(c)));
    panel.stderr!.on('data', (c) => (panelLog += String(c)));
    await until('the panel', async () => (await fetch(`${origin}/api/session`)).ok, 20_000);
  });
  afterAll(async () => {
    if (panel && panel.exitCode === null) {
      const gone = new Promise((r) => panel.once('exit', r));
      panel.kill('SIGTERM');
      await gone;
    }
  });

  async function p(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; text: string }> {
    const res = await fetch(`${origin}${path}`, init);
    const text = await res.text();
    seen.push(JSON.stringify([...res.headers.entries()]), text);
    let body: any = null;
    try { body = JSON.parse(text); } catch { /* a page */ }
    return { status: res.status, body, text };
  }
  const json = (o: unknown) => JSON.stringify(o);

  it('a state-changing request from a foreign origin gets 403 and changes nothing', async () => {
    const [t] = await status();
    const bytes = readFileSync(d.configPath);
    const cfg = await p('/api/config');
    expect(cfg.status).toBe(200);
    const version = cfg.body.config.version;
    const fields = { name: 'x', remote_host: server.alias, remote_port: '1', local_port: String(lPort + 2), direction: 'remote_to_local' };
    const attempts: Array<[string, string, string | undefined, Record<string, string>]> = [
      ['POST', `/api/daemon/stop/${t.hash}`, undefined, { origin: 'http://evil.example' }],
      ['POST', '/api/daemon/stop', undefined, { origin: 'null' }],
      ['POST', '/api/tunnels', json({ version, fields, hash: null }), { origin: 'http://evil.example', 'content-type': 'application/json' }],
      ['POST', '/api/tunnels', json({ version, fields, hash: null }), { origin: `http://127.0.0.1:${panelPort + 1}`, 'content-type': 'application/json' }],
      ['DELETE', '/api/tunnels/0', json({ version, hash: null }), { origin: 'https://127.0.0.1.evil.example', 'content-type': 'application/json' }],
      // No Origin and not the page's own header: a form post from elsewhere.
      ['POST', `/api/daemon/stop/${t.hash}`, undefined, {}],
    ];
    for (const [method, path, body, headers] of attempts) {
      const r = await p(path, { method, body, headers });
      expect({ path, status: r.status, code: r.body?.error?.code }).toEqual({ path, status: 403, code: 'foreign_origin' });
    }
    expect(readFileSync(d.configPath).equals(bytes)).toBe(true);
    const after = (await status())[0];
    expect([after.status, after.pid]).toEqual([t.status, t.pid]);
  });

  it('a foreign Host (DNS rebinding) gets 403', async () => {
    const r = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: panelPort, path: '/api/config', headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(r).toBe(403);
  });

  it('hostile tunnel fields from the page are refused next to the field, and the file is not written', async () => {
    const bytes = readFileSync(d.configPath);
    const version = (await p('/api/config')).body.config.version;
    const good = { name: 'x', remote_host: server.alias, remote_port: '1', local_port: String(lPort + 3), direction: 'remote_to_local' };
    const CASES: Array<[Partial<typeof good>, string]> = [
      [{ remote_host: `-oProxyCommand=touch ${marker}` }, 'remote_host'],
      [{ remote_host: `${server.alias}\n-oProxyCommand=touch ${marker}` }, 'remote_host'],
      [{ remote_host: `${server.alias} -oProxyCommand=touch ${marker}` }, 'remote_host'],
      [{ remote_port: `1 -oProxyCommand=touch ${marker}` }, 'remote_port'],
      [{ local_port: '-L1' }, 'local_port'],
      [{ direction: 'sideways' }, 'direction'],
      [{ name: 'a\nssh_options:\n  ProxyCommand: x' }, 'name'],
    ];
    for (const [over, fieldName] of CASES) {
      const r = await p('/api/tunnels', { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: json({ version, fields: { ...good, ...over }, hash: null }) });
      expect({ over, status: r.status }).toEqual({ over, status: 400 });
      expect(Object.keys(r.body.fields ?? {})).toContain(fieldName);
    }
    // An ssh_options field does not exist in the form: the body is refused as a whole.
    const extra = await p('/api/tunnels', { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: json({ version, fields: { ...good, ssh_options: { ProxyCommand: `touch ${marker}` } }, hash: null }) });
    expect(extra.status).toBe(400);
    expect(extra.body.error.code).toBe('invalid_body');
    expect(readFileSync(d.configPath).equals(bytes)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('bad bodies and paths from the page\'s own origin get a clear 4xx, and the file is not written', async () => {
    const bytes = readFileSync(d.configPath);
    const version = (await p('/api/config')).body.config.version;
    const good = { name: 'x', remote_host: server.alias, remote_port: '1', local_port: String(lPort + 4), direction: 'remote_to_local' };
    const h = { origin, 'content-type': 'application/json' };
    const CASES: Array<[string, string, string, number]> = [
      ['POST', '/api/tunnels', 'not json', 400],
      ['POST', '/api/tunnels', '[]', 400],
      ['POST', '/api/tunnels', 'null', 400],
      ['POST', '/api/tunnels', json({ fields: good, hash: null }), 400],
      ['POST', '/api/tunnels', json({ version: 5, fields: good, hash: null }), 400],
      ['POST', '/api/tunnels', json({ version, fields: { ...good, remote_port: 22 }, hash: null }), 400],
      ['POST', '/api/tunnels', json({ version, fields: { ...good, extra: 'x' }, hash: null }), 400],
      ['POST', '/api/tunnels', json({ version, fields: { ...good, remote_host: 'h'.repeat(5_000) }, hash: null }), 400],
      ['POST', '/api/tunnels', json({ version, fields: good, hash: 'zz' }), 400],
      ['POST', '/api/tunnels', json({ version, fields: { ...good, name: 'n'.repeat(100_000) }, hash: null }), 413],
      ['POST', '/api/tunnels', json({ version: 'stale-version', fields: good, hash: null }), 409],
      ['PUT', '/api/tunnels/abc', json({ version, fields: good, hash: null }), 400],
      ['PUT', '/api/tunnels/-1', json({ version, fields: good, hash: null }), 400],
      ['PUT', '/api/tunnels/999999999', json({ version, fields: good, hash: null }), 400],
      ['DELETE', '/api/tunnels/50', json({ version, hash: null }), 404],
      ['POST', '/api/daemon/start/zz', '', 400],
      ['POST', '/api/daemon/stop/%00', '', 400],
      ['GET', '/api/daemon/logs/..%2F..%2Fstatus', '', 400],
      ['GET', `/api/${'x'.repeat(5_000)}`, '', 404],
    ];
    for (const [method, path, body, status] of CASES) {
      const r = await p(path, { method, headers: h, body: method === 'GET' ? undefined : body });
      expect({ method, path: path.slice(0, 40), status: r.status }).toEqual({ method, path: path.slice(0, 40), status });
      expect(typeof r.body?.error?.code).toBe('string');
      expect(typeof r.body?.error?.message).toBe('string');
    }
    expect(readFileSync(d.configPath).equals(bytes)).toBe(true);
    expect((await p('/api/session')).status).toBe(200);
  });

  it('the page\'s own requests work (so the 403s above are the guard, not a broken panel)', async () => {
    const [t] = await status();
    const r = await p(`/api/daemon/start/${t.hash}`, { method: 'POST', headers: { origin } });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('RUNNING');
  });

  it('the panel never hands out the daemon\'s token: page, config, logs, its own log', async () => {
    const [t] = await status();
    for (const path of ['/', '/api/config', '/api/session', '/api/ssh-hosts', `/api/daemon/logs/${t.hash}`]) {
      expect((await p(path)).status).toBe(200);
    }
    const all = seen.join('\n');
    for (const s of SECRETS) expect(all).not.toContain(s);
    for (const s of SECRETS) expect(panelLog).not.toContain(s);
  });
});
