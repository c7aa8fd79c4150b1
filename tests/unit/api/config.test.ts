// The reference implementation's configuration API on the daemon (SPEC §6, §12),
// through app.request() over a real file in a temp folder.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tunnelHash } from '../../../src/tunnel/hash.js';
import type { FakeEngine } from './fake-engine.js';
import { build } from './helpers.js';

const FILE = `# my tunnels
tunnels:
  # the database
  - name: db                  # keep this comment
    remote_host: "user@bastion"
    remote_port: 5432
    local_port: "127.0.0.1:15432"
    ssh_options:
      ServerAliveInterval: 10
    colour: blue
  - name: web
    remote_host: edge
    remote_port: 8080
    local_port: 18080
    direction: local_to_remote
    interactive: true
proxy:
  providers:
    gpu1:
      base_url: http://127.0.0.1:11434/v1
      api_key: \${GPU1_KEY}
`;

const hashOf = (name: string, host: string, rp: string, lp: string, dir: string, interactive = 'false') =>
  tunnelHash({ name, remote_host: host, remote_port: rp, local_port: lp, direction: dir, interactive });
const DB = hashOf('db', 'user@bastion', '5432', '127.0.0.1:15432', 'remote_to_local');
const WEB = hashOf('web', 'edge', '8080', '18080', 'local_to_remote', 'true');

const engines: FakeEngine[] = [];
afterEach(() => {
  for (const e of engines.splice(0)) e.close();
});

function setup(text: string | null = FILE) {
  const b = build();
  engines.push(b.engine);
  if (text !== null) writeFileSync(b.configPath, text);
  let reloads = 0;
  const original = b.engine.reload.bind(b.engine);
  b.engine.reload = () => {
    reloads++;
    return original();
  };
  return { ...b, reloads: () => reloads, file: () => readFileSync(b.configPath, 'utf8') };
}

const send = (method: string, body?: unknown, headers: Record<string, string> = {}) => ({
  method,
  headers: { 'content-type': 'application/json', ...headers },
  ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
});

async function expectError(r: Response, status: number, code: string) {
  expect(r.status).toBe(status);
  const body = (await r.json()) as { error: { code: string; message: string; fields?: Record<string, string> } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  return body.error;
}

const NEW = { name: 'api', remote_host: 'user@host2', remote_port: '7000', local_port: '17000', interactive: false, direction: 'remote_to_local' };

describe('GET /config and /config/<hash>', () => {
  it('lists the tunnels as the reference did: ports as strings, direction filled in, interactive a boolean, hash', async () => {
    const { app } = setup();
    const r = await app.request('/config');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    const body = await r.json();
    expect(body).toEqual({
      tunnels: [
        { name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local', interactive: false, hash: DB },
        { name: 'web', remote_host: 'edge', remote_port: '8080', local_port: '18080', direction: 'local_to_remote', interactive: true, hash: WEB },
      ],
    });
    // Only tunnel fields: nothing of the proxy section (provider keys) is returned.
    expect(JSON.stringify(body)).not.toContain('GPU1');
  });

  it('a missing file is an empty list', async () => {
    const { app } = setup(null);
    expect(await (await app.request('/config')).json()).toEqual({ tunnels: [] });
  });

  it('one tunnel by full hash, 8-character prefix (the reference) and 4-character prefix (ours)', async () => {
    const { app } = setup();
    for (const h of [DB, DB.slice(0, 8), DB.slice(0, 4)]) {
      const r = await app.request(`/config/${h}`);
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ name: 'db', hash: DB });
    }
    await expectError(await app.request('/config/ffffffff'), 404, 'tunnel_not_found');
    await expectError(await app.request('/config/xyz'), 400, 'invalid_hash');
  });

  it('a file that is not YAML cannot be edited: 409 with where', async () => {
    const { app } = setup('tunnels:\n  - name: [unclosed\n');
    const e = await expectError(await app.request('/config'), 409, 'config_not_editable');
    expect(e.message).toContain('config.yaml');
    await expectError(await app.request('/config/new', send('POST', NEW)), 409, 'config_not_editable');
  });
});

describe('writes keep the file as the user wrote it', () => {
  it('POST /config/new: 201 with the new record; comments, unknown keys and the proxy section kept; a backup; a reload', async () => {
    const { app, file, configPath, reloads } = setup();
    const r = await app.request('/config/new', send('POST', NEW));
    expect(r.status).toBe(201);
    const rec = (await r.json()) as Record<string, unknown>;
    expect(rec).toEqual({ ...NEW, hash: hashOf('api', 'user@host2', '7000', '17000', 'remote_to_local'), warnings: [] });
    const text = file();
    for (const kept of ['# my tunnels', '# the database', '# keep this comment', 'colour: blue', 'ServerAliveInterval: 10', 'api_key: ${GPU1_KEY}', '"user@bastion"']) {
      expect(text).toContain(kept);
    }
    expect(parse(text).tunnels[2]).toEqual({ name: 'api', remote_host: 'user@host2', remote_port: 7000, local_port: 17000, direction: 'remote_to_local' });
    expect(readdirSync(join(dirname(configPath), 'backups'))).toHaveLength(1);
    expect(reloads()).toBe(1);
    // The new tunnel is found by GET at once.
    expect(((await (await app.request('/config')).json()) as { tunnels: unknown[] }).tunnels).toHaveLength(3);
  });

  it('a write\'s answer carries the exposure warnings of what it wrote, as the daemon runs it after the reload', async () => {
    const { app, engine } = setup();
    const socks = { name: 'open', remote_host: 'user@host2', remote_port: '', local_port: '0.0.0.0:1080', direction: 'socks' };
    const hash = hashOf('open', 'user@host2', '', '0.0.0.0:1080', 'socks');
    const message = 'its SOCKS proxy listens on every address of this machine (0.0.0.0:1080): …';
    const told = { hash, name: 'open', line: 22, exposure: { kind: 'open_listener', flag: '-D', all: true, listen: '0.0.0.0:1080', server: 'user@host2', target: null, reach: 'local_network' }, message } as const;
    // The fake engine's reload finds what the daemon's would: this tunnel's exposure (and another's).
    engine.health = { ...engine.health, exposure: [told, { ...told, hash: DB, name: 'db', line: 4, message: 'another' }] };
    const r = await app.request('/config/new', send('POST', socks));
    expect(r.status).toBe(201);
    expect(((await r.json()) as { warnings: string[] }).warnings).toEqual([message]);
    // Replacing the list: every tunnel's, named.
    const all = await app.request('/config', send('PUT', { tunnels: [socks] }));
    expect(((await all.json()) as { warnings: string[] }).warnings).toEqual([`tunnel "open" (line 22): ${message}`, 'tunnel "db" (line 4): another']);
  });

  it('POST /config/<prefix>: updates in place (ssh_options and comments stay) and answers with the new hash', async () => {
    const { app, file } = setup();
    const r = await app.request(`/config/${DB.slice(0, 8)}`, send('POST', { name: 'db', remote_host: 'user@bastion', remote_port: '5433', local_port: '127.0.0.1:15432', direction: 'remote_to_local', interactive: false }));
    expect(r.status).toBe(200);
    const rec = (await r.json()) as { hash: string; remote_port: string };
    expect(rec.remote_port).toBe('5433');
    expect(rec.hash).toBe(hashOf('db', 'user@bastion', '5433', '127.0.0.1:15432', 'remote_to_local'));
    const text = file();
    expect(text).toContain('remote_port: 5433');
    expect(text).toContain('# keep this comment');
    expect(text).toContain('ServerAliveInterval: 10');
    // The old hash is gone now.
    await expectError(await app.request(`/config/${DB}`, send('PUT', NEW)), 404, 'tunnel_not_found');
  });

  it('DELETE /config/<hash> and POST /config/<hash>/delete answer {"status":"success","message"}', async () => {
    const { app, file } = setup();
    const a = await app.request(`/config/${WEB}`, send('DELETE'));
    expect(a.status).toBe(200);
    expect(await a.json()).toEqual({ status: 'success', message: 'Tunnel deleted' });
    expect(file()).not.toContain('name: web');
    const b = await app.request(`/config/${DB.slice(0, 8)}/delete`, send('POST'));
    expect(await b.json()).toEqual({ status: 'success', message: 'Tunnel deleted' });
    expect(parse(file()).tunnels).toEqual([]);
    expect(file()).toContain('api_key: ${GPU1_KEY}');
  });

  it('POST /config replaces the list: unchanged entries keep their node, edited ones are edited in place, missing ones go', async () => {
    const { app, file } = setup();
    const r = await app.request(
      '/config',
      send('POST', {
        tunnels: [
          { name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local', interactive: false, hash: DB },
          { ...NEW, name: 'third' },
        ],
      }),
    );
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'success', message: 'Configuration saved', warnings: [] });
    const text = file();
    expect(text).toContain('# keep this comment');
    expect(text).toContain('colour: blue');
    expect(text).not.toContain('edge');
    expect(parse(text).tunnels.map((t: { name: string }) => t.name)).toEqual(['db', 'third']);
  });

  it('PUT /config with the same list changes nothing in the text', async () => {
    const { app, file } = setup();
    const before = file();
    const list = (await (await app.request('/config')).json()) as { tunnels: unknown[] };
    expect((await app.request('/config', send('PUT', list))).status).toBe(200);
    expect(file()).toBe(before);
  });
});

describe('refusals lose nothing and say why', () => {
  it('an invalid field is 400 invalid_tunnel naming the field; the file is untouched', async () => {
    const { app, file } = setup();
    const before = file();
    const e = await expectError(await app.request('/config/new', send('POST', { ...NEW, remote_port: '99999' })), 400, 'invalid_tunnel');
    expect(e.fields?.remote_port).toMatch(/expected .*port.*found.*99999/);
    await expectError(await app.request('/config/new', send('POST', { ...NEW, remote_host: '-oProxyCommand=touch /tmp/x' })), 400, 'invalid_tunnel');
    expect(file()).toBe(before);
  });

  it('a body that is not the expected JSON is 400 invalid_body naming the key', async () => {
    const { app } = setup();
    await expectError(await app.request('/config/new', send('POST', 'not json')), 400, 'invalid_body');
    const e = await expectError(await app.request('/config/new', send('POST', { ...NEW, ssh_options: { ProxyCommand: 'x' } })), 400, 'invalid_body');
    expect(e.message).toContain('ssh_options');
    await expectError(await app.request('/config', send('POST', { tunnel: [] })), 400, 'invalid_body');
  });

  it('If-Match with a version the file no longer has is 409 config_conflict; the current ETag comes back', async () => {
    const { app, file, configPath } = setup();
    const etag = (await app.request('/config')).headers.get('etag')!;
    writeFileSync(configPath, `${FILE}# edited by hand\n`);
    const r = await app.request('/config/new', send('POST', NEW, { 'if-match': etag }));
    await expectError(r, 409, 'config_conflict');
    expect(r.headers.get('etag')).not.toBe(etag);
    expect(file()).toContain('# edited by hand');
    expect(file()).not.toContain('user@host2');
    const fresh = (await app.request('/config')).headers.get('etag')!;
    expect((await app.request('/config/new', send('POST', NEW, { 'if-match': fresh }))).status).toBe(201);
  });

  it('an ambiguous prefix is 409 listing the matches', async () => {
    const entry = (i: number) => `  - {name: t${i}, remote_host: h, remote_port: ${1000 + i}, local_port: ${2000 + i}}\n`;
    const hashes = new Map<string, number>();
    let text = 'tunnels:\n';
    let prefix = '';
    for (let i = 0; prefix === ''; i++) {
      const h = hashOf(`t${i}`, 'h', String(1000 + i), String(2000 + i), 'remote_to_local');
      if (hashes.has(h.slice(0, 4))) prefix = h.slice(0, 4);
      hashes.set(h.slice(0, 4), i);
      text += entry(i);
    }
    const { app } = setup(text);
    const r = await app.request(`/config/${prefix}`);
    expect(r.status).toBe(409);
    const body = (await r.json()) as { error: { code: string; matches: string[] } };
    expect(body.error.code).toBe('ambiguous_hash');
    expect(body.error.matches).toHaveLength(2);
  });

  it('wrong methods are 405 with Allow', async () => {
    const { app } = setup();
    const r = await app.request('/config/new', send('GET'));
    // GET /config/new reads "new" as a hash prefix: not hex.
    expect(r.status).toBe(400);
    const d = await app.request('/config', send('DELETE'));
    expect(d.status).toBe(405);
    expect(d.headers.get('allow')).toContain('PUT');
  });
});
