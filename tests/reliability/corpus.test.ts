// The bad-input corpus: config files, control API paths and bodies, proxy requests and
// tunnel-cli arguments that a user, a script or an attacker might send. Each case must
// get a clear error (an HTTP status with {"error":{"code","message"}}, a config problem
// naming the line and field, or tunnel-cli's exit 2 with one line on stderr), the
// daemon must stay up (/health 200 after each), and the config file must be left
// byte for byte as it was.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatProblem, parseConfigText } from '../../src/config/load.js';
import { CLI, sleep, startDaemon, type Daemon } from './helpers.js';

const GOOD_TUNNEL = (over: Record<string, string> = {}) => {
  const f: Record<string, string> = { name: 'db', remote_host: 'bastion', remote_port: '5432', local_port: '15432', direction: 'remote_to_local', ...over };
  return '  - ' + Object.entries(f).map(([k, v]) => `${k}: ${v}`).join('\n    ') + '\n';
};
const withTunnel = (over: Record<string, string>) => 'tunnels:\n' + GOOD_TUNNEL(over);
const withOptions = (opts: string) => 'tunnels:\n' + GOOD_TUNNEL() + '    ssh_options:\n' + opts.split('\n').map((l) => `      ${l}`).join('\n') + '\n';

/** [what, config text, a field the problems must name] */
const CONFIG_CASES: Array<[string, string, RegExp]> = [
  ['tunnels is a number', 'tunnels: 5\n', /^tunnels$/],
  ['tunnels is a map', 'tunnels:\n  a: 1\n', /^tunnels$/],
  ['tunnels entry is a string', 'tunnels:\n  - hello\n', /^tunnels\[0\]$/],
  ['remote_host missing', 'tunnels:\n  - name: a\n    remote_port: 1\n    local_port: 2\n    direction: remote_to_local\n', /^tunnels\[0\]\.remote_host$/],
  ['remote_port missing', 'tunnels:\n  - name: a\n    remote_host: h\n    local_port: 2\n    direction: remote_to_local\n', /^tunnels\[0\]\.remote_port$/],
  ['local_port missing', 'tunnels:\n  - name: a\n    remote_host: h\n    remote_port: 2\n    direction: remote_to_local\n', /^tunnels\[0\]\.local_port$/],
  ['direction unknown', withTunnel({ direction: 'sideways' }), /direction$/],
  ['direction a number', withTunnel({ direction: '1' }), /direction$/],
  ['remote_port 0', withTunnel({ remote_port: '0' }), /remote_port$/],
  ['remote_port 65536', withTunnel({ remote_port: '65536' }), /remote_port$/],
  ['remote_port negative', withTunnel({ remote_port: '-1' }), /remote_port$/],
  ['remote_port huge number', withTunnel({ remote_port: '99999999999999999999999' }), /remote_port$/],
  ['remote_port a fraction', withTunnel({ remote_port: '1.5' }), /remote_port$/],
  ['remote_port a word', withTunnel({ remote_port: 'postgres' }), /remote_port$/],
  ['remote_port a list', withTunnel({ remote_port: '[1, 2]' }), /remote_port$/],
  ['remote_port a map', withTunnel({ remote_port: '{a: 1}' }), /remote_port$/],
  ['remote_port ip with empty port', withTunnel({ remote_port: '"127.0.0.1:"' }), /remote_port$/],
  ['remote_port bad IPv6', withTunnel({ remote_port: '"[::1:80"' }), /remote_port$/],
  ['remote_port with an option smuggled', withTunnel({ remote_port: '"1 -oProxyCommand=x"' }), /remote_port$/],
  ['local_port starting with -', withTunnel({ local_port: '"-L1"' }), /local_port$/],
  ['local_port with a space', withTunnel({ local_port: '"1 -oX"' }), /local_port$/],
  ['local_port with a newline', withTunnel({ local_port: '"15432\\n-oProxyCommand=x"' }), /local_port$/],
  ['local_port null', withTunnel({ local_port: 'null' }), /local_port$/],
  ['remote_host starting with -', withTunnel({ remote_host: '"-oProxyCommand=touch /tmp/x"' }), /remote_host$/],
  ['remote_host with a space', withTunnel({ remote_host: '"bastion -oProxyCommand=x"' }), /remote_host$/],
  ['remote_host with a newline', withTunnel({ remote_host: '"bastion\\nProxyCommand x"' }), /remote_host$/],
  ['remote_host with a tab', withTunnel({ remote_host: '"a\\tb"' }), /remote_host$/],
  ['remote_host with a NUL', withTunnel({ remote_host: '"a\\0b"' }), /remote_host$/],
  ['remote_host with a bell', withTunnel({ remote_host: '"a\\ab"' }), /remote_host$/],
  ['remote_host empty', withTunnel({ remote_host: '""' }), /remote_host$/],
  ['remote_host null', withTunnel({ remote_host: 'null' }), /remote_host$/],
  ['remote_host a list', withTunnel({ remote_host: '[a, b]' }), /remote_host$/],
  ['remote_host a map', withTunnel({ remote_host: '{a: b}' }), /remote_host$/],
  ['remote_host 10 KB', withTunnel({ remote_host: 'h'.repeat(10_000) }), /remote_host$/],
  ['name a list', withTunnel({ name: '[a]' }), /name$/],
  ['name over the length limit', withTunnel({ name: 'n'.repeat(1_000) }), /name$/],
  ['interactive not a boolean', withTunnel({ interactive: 'maybe' }), /interactive$/],
  ['ssh_options ProxyCommand', withOptions('ProxyCommand: touch /tmp/x'), /ssh_options\.ProxyCommand$/],
  ['ssh_options LocalCommand', withOptions('LocalCommand: touch /tmp/x'), /ssh_options\.LocalCommand$/],
  ['ssh_options PermitLocalCommand', withOptions('PermitLocalCommand: "yes"'), /ssh_options\.PermitLocalCommand$/],
  ['ssh_options KnownHostsCommand', withOptions('KnownHostsCommand: /bin/sh -c x'), /ssh_options\.KnownHostsCommand$/],
  ['ssh_options Match exec', withOptions('Match: exec "touch /tmp/x"'), /ssh_options\.Match$/],
  ['ssh_options proxycommand lower case', withOptions('proxycommand: touch /tmp/x'), /ssh_options\.proxycommand$/i],
  ['ssh_options StrictHostKeyChecking no', withOptions('StrictHostKeyChecking: "no"'), /ssh_options\.StrictHostKeyChecking$/],
  ['ssh_options value smuggling a newline', withOptions('ServerAliveInterval: "5\\nProxyCommand touch /tmp/x"'), /ssh_options\.ServerAliveInterval$/],
  ['ssh_options value smuggling a space', withOptions('Ciphers: "aes128-ctr ProxyCommand=x"'), /ssh_options\.Ciphers$/],
  ['ssh_options value starting with -', withOptions('IdentityFile: "-oProxyCommand=x"'), /ssh_options\.IdentityFile$/],
  ['ssh_options unknown option', withOptions('Frobnicate: "yes"'), /ssh_options\.Frobnicate$/],
  ['ssh_options a list', 'tunnels:\n' + GOOD_TUNNEL() + '    ssh_options: [a, b]\n', /ssh_options$/],
  ['top-level ssh_options ProxyCommand', 'ssh_options:\n  ProxyCommand: touch /tmp/x\n' + withTunnel({}), /^ssh_options\.ProxyCommand$/],
  ['duplicate tunnels (same hash)', 'tunnels:\n' + GOOD_TUNNEL() + GOOD_TUNNEL(), /^tunnels\[1\]/],
  ['two tunnels on one local port', 'tunnels:\n' + GOOD_TUNNEL() + GOOD_TUNNEL({ name: 'other', remote_port: '5433' }), /^tunnels\[1\]\.local_port$/],
  ['duplicate key in a tunnel', 'tunnels:\n' + GOOD_TUNNEL() + '    remote_port: 1\n', /remote_port/],
  ['duplicate top-level key', 'tunnels: []\ntunnels: []\n', /tunnels/],
  ['YAML merge key of a value that is no map', 'base: &b h\ntunnels:\n  - <<: *b\n    remote_port: 1\n    local_port: 2\n    direction: remote_to_local\n', /<</],
  ['unclosed flow sequence', 'tunnels: [\n', /\(file\)/],
  ['unclosed quote', 'tunnels:\n  - name: "db\n', /\(file\)/],
  ['tab indentation', 'tunnels:\n\t- name: db\n', /\(file\)/],
  ['deep nesting (100,000 levels)', 'tunnels: ' + '['.repeat(100_000), /\(file\)/],
  ['alias bomb', 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ntunnels: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n', /\(file\)|tunnels/],
  ['over 1 MiB', '# ' + 'x'.repeat(1024 * 1024 + 10) + '\ntunnels: []\n', /\(file\)/],
  ['proxy.providers a list', 'tunnels: []\nproxy:\n  providers: [a]\n', /^proxy\.providers$/],
  ['proxy.default_timeout a word', 'tunnels: []\nproxy:\n  default_timeout: soon\n  providers: {}\n', /^proxy\.default_timeout$/],
  ['proxy base_url not a URL', 'tunnels: []\nproxy:\n  providers:\n    gpu1:\n      base_url: not a url\n', /^proxy\.providers\.gpu1\.base_url$/],
  ['proxy provider prefix with a colon', 'tunnels: []\nproxy:\n  providers:\n    "a:b":\n      base_url: http://127.0.0.1:1/v1\n', /^proxy\.providers/],
];

describe('config corpus (parseConfigText)', () => {
  it(`has ${CONFIG_CASES.length} cases`, () => expect(CONFIG_CASES.length).toBeGreaterThanOrEqual(60));

  it.each(CONFIG_CASES)('%s: refused (the file, or the entry), every problem with line, field, expected and found', (_what, text, field) => {
    const r = parseConfigText(text);
    expect(['invalid', 'partial']).toContain(r.kind);
    if (r.kind !== 'invalid' && r.kind !== 'partial') return;
    if (r.kind === 'partial') expect(r.config.tunnels.every((t) => !r.rejected.some((x) => x.line === t.line))).toBe(true);
    expect(r.problems.length).toBeGreaterThan(0);
    for (const p of r.problems) {
      expect(p.field).not.toBe('');
      expect(p.expected).not.toBe('');
      expect(p.found).not.toBe('');
      // Only a refusal of the whole file (its size) has no position.
      if (!/bytes/.test(p.expected)) expect(p.line).toBeGreaterThan(0);
      // A problem line stays readable: no echo of a megabyte of input.
      expect(formatProblem(p).length).toBeLessThan(1_000);
      expect(formatProblem(p)).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    }
    expect(r.problems.map((p) => p.field)).toEqual(expect.arrayContaining([expect.stringMatching(field)]));
  });
});

// ---------------------------------------------------------------------------------
// One daemon for everything that goes over HTTP and through tunnel-cli.

const CONFIG = [
  '# corpus daemon: interactive tunnels never start, so no ssh is needed',
  'tunnels:',
  '  - name: one',
  '    remote_host: nowhere-host',
  '    remote_port: 5432',
  '    local_port: 25432',
  '    direction: remote_to_local',
  '    interactive: true',
  'proxy:',
  '  default_timeout: 5',
  '  providers:',
  '    gpu1:',
  '      base_url: http://127.0.0.1:9/v1',
  '',
].join('\n');

let d: Daemon;
let configBytes: Buffer;

beforeAll(async () => {
  d = await startDaemon({ config: CONFIG, sshConfigPath: '/dev/null' });
  configBytes = readFileSync(d.configPath);
});
afterAll(async () => {
  await d?.cleanup();
});

async function stillHealthy(): Promise<void> {
  const res = await d.api('/health');
  expect(res.status).toBe(200);
  expect(readFileSync(d.configPath).equals(configBytes)).toBe(true);
}

/** A request with the path sent exactly as given (fetch would normalise it). */
function request(method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request({ host: '127.0.0.1', port: d.apiPort, method, path, headers: { connection: 'close', ...length, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', (e) => reject(new Error(`${method} ${path.slice(0, 80)}: ${e.message}`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Bytes on a raw socket, for requests no HTTP client would send; resolves with the whole answer. */
function raw(bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: d.apiPort });
    let got = '';
    s.on('connect', () => s.write(bytes));
    s.on('data', (c) => (got += String(c)));
    s.on('error', (e) => (got ? resolve(got) : reject(e)));
    s.on('close', () => resolve(got));
    setTimeout(() => s.destroy(), 5_000);
  });
}

/**
 * POSTs a `total`-byte body to the chat route from a raw socket. With a declared
 * length, only the headers are sent before waiting for the answer (as a client using
 * Expect: 100-continue would); chunked, the body is sent until the server answers or
 * closes. Resolves with what the server said and how much was sent.
 */
function upload(total: number, chunked: boolean): Promise<{ answer: string; sent: number }> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port: d.apiPort });
    let got = '';
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const done = () => {
      s.destroy();
      resolve({ answer: got, sent });
    };
    const pump = () => {
      while (got === '' && sent < total && !s.destroyed) {
        const piece = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
        sent += chunk.length;
        if (!s.write(piece)) return void s.once('drain', pump);
      }
      if (sent >= total && got === '' && !s.destroyed) s.write('0\r\n\r\n');
    };
    s.on('connect', () => {
      s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${d.apiPort}\r\nContent-Type: application/json\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`}\r\n\r\n`);
      if (chunked) pump();
    });
    s.on('data', (c) => {
      got += String(c);
      if (/\r\n\r\n[\s\S]*\}/.test(got)) done();
    });
    s.on('error', done);
    s.on('close', done);
    setTimeout(done, 20_000);
  });
}

function expectApiError(r: { status: number; body: string }, status: number, code?: string): void {
  expect(r.status).toBe(status);
  const body = JSON.parse(r.body);
  expect(typeof body.error.code).toBe('string');
  expect(body.error.code).toMatch(/^[a-z][a-z0-9_]*$/);
  if (code) expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(10);
  expect(body.error.message.length).toBeLessThan(1_000);
}

const longHex = 'a'.repeat(8_000);

/** [what, method, path, status, code] */
const API_CASES: Array<[string, string, string, number, string]> = [
  ['start with a non-hex hash', 'POST', '/start/zzzz', 400, 'invalid_hash'],
  ['stop with %00', 'POST', '/stop/%00', 400, 'invalid_hash'],
  ['stop with a 3-char prefix', 'POST', '/stop/abc', 400, 'invalid_hash'],
  ['start with a 33-char hash', 'POST', '/start/0123456789abcdef0123456789abcdef0', 400, 'invalid_hash'],
  ['start with 8,000 hex chars', 'POST', `/start/${longHex}`, 400, 'invalid_hash'],
  ['start with an unknown prefix', 'POST', '/start/abcd', 404, 'tunnel_not_found'],
  ['stop with an unknown full hash', 'POST', '/stop/0123456789abcdef0123456789abcdef', 404, 'tunnel_not_found'],
  ['logs with an unknown prefix', 'GET', '/logs/ffff', 404, 'tunnel_not_found'],
  ['logs with unicode', 'GET', '/logs/%E2%98%83%E2%98%83%E2%98%83%E2%98%83', 400, 'invalid_hash'],
  ['logs with an emoji', 'GET', '/logs/%F0%9F%92%A3', 400, 'invalid_hash'],
  ['start with an encoded path traversal', 'POST', '/start/..%2F..%2Fetc%2Fpasswd', 400, 'invalid_hash'],
  ['start with an option-looking hash', 'POST', '/start/-oProxyCommand=x', 400, 'invalid_hash'],
  ['start with an encoded newline', 'POST', '/start/abcd%0aProxyCommand', 400, 'invalid_hash'],
  ['start with a bad percent escape', 'POST', '/start/%ZZ', 400, 'invalid_hash'],
  ['start with an encoded space', 'POST', '/start/abcd%20efgh', 400, 'invalid_hash'],
  ['stop with a lone surrogate escape', 'POST', '/stop/%ED%A0%80', 400, 'invalid_hash'],
  ['logs with a NUL', 'GET', '/logs/%00%00%00%00', 400, 'invalid_hash'],
  ['unknown route', 'GET', '/nothing', 404, 'not_found'],
  ['unknown route, 8 KB', 'GET', `/${'x'.repeat(8_000)}`, 404, 'not_found'],
  ['upper-case route', 'GET', '/STATUS', 404, 'not_found'],
  ['double slash', 'GET', '//status', 404, 'not_found'],
  ['trailing slash on a hash route', 'POST', '/start/', 404, 'not_found'],
  ['nested hash path', 'POST', '/start/abcd/efgh', 404, 'not_found'],
  ['GET on start', 'GET', '/start', 405, 'method_not_allowed'],
  ['PUT on status', 'PUT', '/status', 405, 'method_not_allowed'],
  ['DELETE on list', 'DELETE', '/list', 405, 'method_not_allowed'],
  ['POST on logs', 'POST', '/logs/abcd', 405, 'method_not_allowed'],
  ['OPTIONS preflight on start', 'OPTIONS', '/start', 405, 'method_not_allowed'],
  ['PATCH on reload', 'PATCH', '/reload', 405, 'method_not_allowed'],
  ['GET on reload', 'GET', '/reload', 405, 'method_not_allowed'],
];

describe('control API corpus (one daemon)', () => {
  it.each(API_CASES)('%s: %s %s → %i', async (_what, method, path, status, code) => {
    const r = await request(method, path);
    expectApiError(r, status, code);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    await stillHealthy();
  });

  const BODY_CASES: Array<[string, string, string, Buffer | string, Record<string, string>]> = [
    ['reload with a JSON body', 'POST', '/reload', '{"path":"/etc/passwd"}', { 'content-type': 'application/json' }],
    // Labelled JSON: any other type on a state-changing request is refused (415) before a route sees it.
    ['stop-all with 1 MB of garbage', 'POST', '/stop', Buffer.alloc(1024 * 1024, 0xff), { 'content-type': 'application/json' }],
    ['status with a body on GET', 'GET', '/status', '{"x":1}', { 'content-type': 'application/json' }],
  ];
  it.each(BODY_CASES)('%s: the control routes take no body and ignore it; nothing else changes', async (_what, method, path, body, headers) => {
    const before = await d.json<any[]>('/status');
    const r = await request(method, path, body, headers);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toBeTruthy();
    const after = await d.json<any[]>('/status');
    expect(after.map((t) => [t.hash, t.status])).toEqual(before.map((t) => [t.hash, t.status]));
    await stillHealthy();
  });

  const RAW_CASES: Array<[string, string | Buffer, RegExp]> = [
    ['a 20 KB path (over Node\'s header limit)', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, /^HTTP\/1\.1 431 /],
    ['a request line of garbage', 'GARBAGE\r\n\r\n', /^HTTP\/1\.1 400 /],
    ['a NUL inside a header', 'GET /status HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n', /^HTTP\/1\.1 400 /],
    ['a raw space in the path', 'GET /start/ab cd HTTP/1.1\r\nHost: x\r\n\r\n', /^HTTP\/1\.1 400 /],
    ['a bad Content-Length', 'POST /stop HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n', /^HTTP\/1\.1 400 /],
    ['binary noise', Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x01, 0x00, 0x00, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]), /^HTTP\/1\.1 400 |^$/],
  ];
  it.each(RAW_CASES)('%s: refused by the HTTP layer with a JSON error, the daemon stays up', async (_what, bytes, statusLine) => {
    const answer = await raw(bytes);
    expect(answer).toMatch(statusLine);
    if (answer !== '') {
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      expect(JSON.parse(body).error.code).toMatch(/^(bad_request|request_too_large)$/);
    }
    await stillHealthy();
  });

  it('a client that sends half a request and vanishes leaves the daemon serving', async () => {
    const s = net.connect({ host: '127.0.0.1', port: d.apiPort });
    await new Promise((r) => s.once('connect', r));
    s.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{"model":');
    await sleep(100);
    s.destroy();
    await stillHealthy();
  });
});

// ---------------------------------------------------------------------------------

const chat = (body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  request('POST', '/v1/chat/completions', body, headers);

/** [what, body, status, code] */
const PROXY_CASES: Array<[string, string | Buffer, number, string]> = [
  ['empty body', '', 400, 'invalid_json'],
  ['not JSON', 'not json', 400, 'invalid_json'],
  ['truncated JSON', '{"model": "gpu1:x", "messages": [', 400, 'invalid_json'],
  ['JSON array', '[]', 400, 'invalid_json'],
  ['JSON null', 'null', 400, 'invalid_json'],
  ['JSON string', '"hello"', 400, 'invalid_json'],
  ['JSON number', '42', 400, 'invalid_json'],
  ['model missing', '{"messages":[]}', 400, 'invalid_request'],
  ['model a number', '{"model":1,"messages":[]}', 400, 'invalid_request'],
  ['model an object', '{"model":{"a":1},"messages":[]}', 400, 'invalid_request'],
  ['model null', '{"model":null,"messages":[]}', 400, 'invalid_request'],
  ['messages missing', '{"model":"gpu1:x"}', 400, 'invalid_request'],
  ['messages a string', '{"model":"gpu1:x","messages":"hi"}', 400, 'invalid_request'],
  ['messages an object', '{"model":"gpu1:x","messages":{"role":"user"}}', 400, 'invalid_request'],
  ['messages holding a number', '{"model":"gpu1:x","messages":[1]}', 400, 'invalid_request'],
  ['messages holding null', '{"model":"gpu1:x","messages":[null]}', 400, 'invalid_request'],
  ['model without a prefix', '{"model":"llama3","messages":[]}', 404, 'model_not_found'],
  ['model with an empty name', '{"model":"gpu1:","messages":[]}', 400, 'invalid_request'],
  ['unknown prefix', '{"model":"nope:x","messages":[]}', 404, 'model_not_found'],
  ['prefix with a NUL', '{"model":"\\u0000:x","messages":[]}', 404, 'model_not_found'],
  ['prefix in unicode', '{"model":"☃:x","messages":[]}', 404, 'model_not_found'],
  ['prefix of 100 KB', JSON.stringify({ model: `${'p'.repeat(100_000)}:x`, messages: [] }), 404, 'model_not_found'],
  // Refused as it is, never passed on with U+FFFD for the bad bytes.
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x6d, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), 400, 'invalid_json'],
  ['2 MB of base64 noise', Buffer.from('x'.repeat(2 * 1024 * 1024)), 400, 'invalid_json'],
  ['2 MB valid JSON for an unknown provider', JSON.stringify({ model: 'nope:x', messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }] }), 404, 'model_not_found'],
  ['deeply nested JSON', '{"model":"gpu1:x","messages":[' + '['.repeat(50_000) + ']'.repeat(50_000) + ']}', 400, 'invalid_request'],
  ['provider down (valid request)', '{"model":"gpu1:x","messages":[{"role":"user","content":"hi"}]}', 502, 'upstream_unreachable'],
];

describe('proxy corpus (/v1 on the same daemon)', () => {
  it.each(PROXY_CASES.map(([what, body, status, code]) => [what, status, code, body] as const))('%s → %i %s', async (_what, status, code, body) => {
    const r = await chat(body);
    expect(r.status).toBe(status);
    const e = JSON.parse(r.body).error;
    expect(e.code).toBe(code);
    expect(typeof e.message).toBe('string');
    // Even an unknown 100 KB prefix is quoted only in part.
    expect(e.message.length).toBeLessThan(1_000);
    expect(typeof e.type).toBe('string');
    expect(r.headers['x-request-id']).toBeTruthy();
    await stillHealthy();
  });

  it('17 MB declared by Content-Length → 413 request_too_large before a byte of the body is sent', async () => {
    const { answer, sent } = await upload(17 * 1024 * 1024, false);
    expect(sent).toBe(0);
    expect(answer.slice(0, 200)).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('request_too_large');
    await stillHealthy();
  });

  it('17 MB sent chunked (no length given) → refused once past the limit; the client, still sending, gets the 413', async () => {
    const { answer, sent } = await upload(17 * 1024 * 1024, true);
    expect(answer.slice(0, 200)).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/request_too_large/);
    expect(sent).toBeLessThanOrEqual(17 * 1024 * 1024);
    await stillHealthy();
  });

  it('a plain http.request POST of 17 MB without Expect: 100-continue reads the 413', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number | string>((resolve) => {
      const req = request({ host: '127.0.0.1', port: d.apiPort, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 17 * 1024 * 1024 } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (e) => resolve(String(e)));
      req.end(Buffer.alloc(17 * 1024 * 1024, 0x20));
    });
    expect(status).toBe(413);
    await stillHealthy();
  });

  const OTHER: Array<[string, string, string, number, string]> = [
    ['GET on chat/completions', 'GET', '/v1/chat/completions', 405, 'method_not_allowed'],
    ['POST on models', 'POST', '/v1/models', 405, 'method_not_allowed'],
    ['unknown /v1 path', 'GET', '/v1/nothing', 404, 'not_found'],
    ['/v1 with 8 KB of path', 'POST', `/v1/${'c'.repeat(8_000)}`, 404, 'not_found'],
  ];
  it.each(OTHER)('%s: %s %s → %i', async (_what, method, path, status, code) => {
    const r = await request(method, path);
    expect(r.status).toBe(status);
    expect(JSON.parse(r.body).error.code).toBe(code);
    await stillHealthy();
  });
});

// ---------------------------------------------------------------------------------

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, TUNNEL_SOCKET: d.socketPath, TUNNEL_API_URL: '', TUNNEL_API_TOKEN: '', ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

/** [what, argv, exit code, stderr pattern] */
const CLI_CASES: Array<[string, string[], number, RegExp]> = [
  ['unknown command', ['frobnicate'], 2, /unknown command "frobnicate"/],
  ['no command (help on stdout)', [], 2, /^$/],
  ['start-tunnel without a hash', ['start-tunnel'], 2, /start-tunnel: expected <hash>, found none/],
  ['start-tunnel with non-hex', ['start-tunnel', 'zz'], 2, /4 hex characters.*found "zz"/],
  ['stop-tunnel with 3 chars', ['stop-tunnel', 'abc'], 2, /found "abc"/],
  ['logs with 5,000 chars', ['logs', 'a'.repeat(5_000)], 2, /found "a{80}"/],
  ['logs with a space', ['logs', 'abcd efgh'], 2, /found "abcd efgh"/],
  ['start-tunnel with unicode', ['start-tunnel', '☃☃☃☃'], 2, /found "☃☃☃☃"/],
  ['start-tunnel with a newline', ['start-tunnel', 'abcd\nrm -rf /'], 2, /found "abcd\\nrm -rf \/"/],
  ['stop-tunnel with an option', ['stop-tunnel', '-oProxyCommand=x'], 2, /Unknown option/],
  ['unknown option', ['status', '--bogus'], 2, /Unknown option `--bogus`/],
  ['extra argument', ['list', 'extra'], 2, /list: expected no arguments, found 1: "extra"/],
  ['timeout zero', ['start', '--timeout', '0'], 2, /--timeout: expected a number of seconds above 0, found "0"/],
  ['timeout a word', ['start', '--timeout', 'abc'], 2, /--timeout/],
  ['timeout NaN', ['start-tunnel', 'abcd', '--timeout', 'NaN'], 2, /--timeout/],
  ['socket and url together', ['--url', 'http://127.0.0.1:1', '--socket', '/tmp/x.sock', 'status'], 2, /either --socket or --url/],
  ['url that is not a URL', ['--url', 'not a url', 'status'], 2, /url/i],
  ['url with a foreign scheme', ['--url', 'ftp://127.0.0.1/', 'status'], 2, /url/i],
  ['unknown prefix (daemon answers 404)', ['start-tunnel', 'abcd', '--no-wait'], 1, /no tunnel has a hash starting with abcd/],
  ['unreachable socket', ['--socket', '/nonexistent/dir/api.sock', 'status'], 3, /./],
];

describe('tunnel-cli corpus', () => {
  it.each(CLI_CASES)('%s (args %j) → exit %i with one line', async (_what, args, code, pattern) => {
    const r = await cli(args, args.includes('--socket') || args.includes('--url') ? { TUNNEL_SOCKET: '' } : {});
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code });
    if (args.length === 0) expect(r.stdout).toMatch(/Usage:/);
    else {
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      expect(lines.length).toBe(1);
      expect(lines[0]).toMatch(/^tunnel-cli: /);
      expect(lines[0]!.length).toBeLessThan(400);
    }
    expect(r.stderr).toMatch(pattern);
    await stillHealthy();
  });
});

// ---------------------------------------------------------------------------------

describe('config corpus through the real daemon', () => {
  const BAD_FILES: Array<[string, string | Buffer, RegExp]> = [
    ['remote_host starting with -', 'tunnels:\n' + GOOD_TUNNEL({ remote_host: '"-oProxyCommand=touch /tmp/x"' }), /line 3, column \d+: tunnels\[0\]\.remote_host/],
    ['ssh_options ProxyCommand', withOptions('ProxyCommand: touch /tmp/x'), /line \d+, column \d+: tunnels\[0\]\.ssh_options\.ProxyCommand/],
    ['two tunnels on one local port', 'tunnels:\n' + GOOD_TUNNEL() + GOOD_TUNNEL({ name: 'other', remote_port: '5433' }), /tunnels\[1\]\.local_port/],
    ['deep nesting', 'tunnels: ' + '['.repeat(100_000), /\(file\)/],
    ['bytes that are not UTF-8', Buffer.from([0x74, 0x75, 0x6e, 0xff, 0xfe, 0x0a]), /UTF-8/],
  ];
  it.each(BAD_FILES)('%s: /health reports the problem, the last good config keeps running, the file is not touched', async (_what, text, error) => {
    const before = await d.json<any[]>('/list');
    d.writeConfig(typeof text === 'string' ? text : text.toString('latin1'));
    if (typeof text !== 'string') {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(d.configPath, text);
    }
    const written = readFileSync(d.configPath);
    const h = await d.waitFor('the problem reported', async () => {
      const body = await d.json('/health/details');
      return body.config.valid === false && error.test(body.config.error) ? body : undefined;
    }, 10_000);
    expect(h.ok).toBe(true);
    // Nothing that ran is removed or changed; valid new entries of a file with problems may join.
    expect(await d.json<any[]>('/list')).toEqual(expect.arrayContaining(before));
    const cliStatus = await cli(['status']);
    expect(cliStatus.stdout + cliStatus.stderr).toMatch(error);
    expect(readFileSync(d.configPath).equals(written)).toBe(true);
    d.writeConfig(CONFIG);
    await d.waitFor('valid again', async () => (await d.json('/health')).config.valid === true, 10_000);
    await stillHealthy();
  });
});

describe('special files in place of the config', () => {
  it.each([
    ['a FIFO (opening it would block a naive reader)', (path: string) => execFileSync('mkfifo', [path]), /a regular file/],
    ['a directory', (path: string) => mkdirSync(path), /a file/],
    ['a symlink loop', (path: string) => symlinkSync(path, path), /readable file|ELOOP/],
  ] as Array<[string, (path: string) => void, RegExp]>)('%s: reported, the daemon keeps answering, the last good config stays', async (_what, make, error) => {
    const before = await d.json<any[]>('/list');
    rmSync(d.configPath);
    make(d.configPath);
    try {
      await d.api('/reload', { method: 'POST' });
      const h = await d.waitFor('the problem reported', async () => {
        const body = await d.json('/health/details');
        return body.config.valid === false && error.test(body.config.error) ? body : undefined;
      }, 10_000);
      expect(h.ok).toBe(true);
      expect(await d.json<any[]>('/list')).toEqual(before);
    } finally {
      rmSync(d.configPath, { recursive: true, force: true });
      writeFileSync(d.configPath, CONFIG);
    }
    await d.waitFor('valid again', async () => (await d.json('/health')).config.valid === true, 10_000);
    await stillHealthy();
  });
});

describe('corpus size', () => {
  it('has at least 100 cases across config, API, proxy and CLI', () => {
    const total = CONFIG_CASES.length + API_CASES.length + 3 + 6 + 1 + PROXY_CASES.length + 2 + 4 + CLI_CASES.length + 5 + 3;
    expect(total).toBeGreaterThanOrEqual(100);
  });
});
