// The daemon's /config API over files with YAML anchors, aliases and merge keys: every
// write keeps the other tunnels as they were and the user's anchors where they still
// make sense, through app.request() over a real file.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load.js';
import type { FakeEngine } from './fake-engine.js';
import { build } from './helpers.js';
import { FIXTURES } from '../config/anchor-fixtures.js';

const ALIASES = FIXTURES['a scalar anchored in one entry, aliased by two']!;
const MERGES = FIXTURES['a defaults map merged into every entry']!;

const engines: FakeEngine[] = [];
afterEach(() => {
  for (const e of engines.splice(0)) e.close();
});

function setup(text: string) {
  const b = build();
  engines.push(b.engine);
  writeFileSync(b.configPath, text);
  return { app: b.app, file: () => readFileSync(b.configPath, 'utf8') };
}

const send = (method: string, body?: unknown) => ({
  method,
  headers: { 'content-type': 'application/json' },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});

interface Rec { name: string; remote_host: string; remote_port: string; local_port: string; direction: string; interactive: boolean; hash: string }

async function list(app: ReturnType<typeof setup>['app']): Promise<Rec[]> {
  return ((await (await app.request('/config')).json()) as { tunnels: Rec[] }).tunnels;
}

/** name → remote_host, as the daemon's loader reads the file. */
function hosts(text: string): Record<string, string> {
  const r = parseConfigText(text);
  expect(r.kind, JSON.stringify(r)).toBe('ok');
  return r.kind === 'ok' ? Object.fromEntries(r.config.tunnels.map((t) => [t.name, t.remote_host])) : {};
}

const body = (r: Rec, over: Partial<Rec> = {}) => {
  const { hash: _hash, ...rest } = { ...r, ...over };
  return rest;
};

describe('/config writes with anchors and aliases', () => {
  it('DELETE of the entry that holds the anchor: the anchor moves to the first alias, the others keep their host', async () => {
    const { app, file } = setup(ALIASES);
    const [db] = await list(app);
    expect((await app.request(`/config/${db!.hash}`, send('DELETE'))).status).toBe(200);
    const text = file();
    expect(hosts(text)).toEqual({ cache: 'user@bastion', web: 'user@bastion' });
    expect(text).toContain('remote_host: &jump user@bastion');
    expect(text).toContain('remote_host: *jump');
    expect(text).toContain('# hosts shared by anchors');
  });

  it('PUT of a changed anchored value changes that tunnel only; the anchor moves on with the old value', async () => {
    const { app, file } = setup(ALIASES);
    const [db] = await list(app);
    expect((await app.request(`/config/${db!.hash}`, send('PUT', body(db!, { remote_host: 'user@other' })))).status).toBe(200);
    const text = file();
    expect(hosts(text)).toEqual({ db: 'user@other', cache: 'user@bastion', web: 'user@bastion' });
    expect(text).toMatch(/name: cache\n\s+remote_host: &jump user@bastion/);
    expect(text).toContain('remote_host: *jump');
  });

  it('POST over an alias: unchanged keeps the alias (no write at all); changed replaces it on that entry only', async () => {
    const { app, file } = setup(ALIASES);
    const [, cache] = await list(app);
    expect((await app.request(`/config/${cache!.hash}`, send('POST', body(cache!)))).status).toBe(200);
    expect(file()).toBe(ALIASES);
    expect((await app.request(`/config/${cache!.hash}`, send('POST', body(cache!, { remote_host: 'user@cache-host' })))).status).toBe(200);
    const text = file();
    expect(hosts(text)).toEqual({ db: 'user@bastion', cache: 'user@cache-host', web: 'user@bastion' });
    expect(text).toContain('remote_host: &jump user@bastion   # the jump host'.replace('   ', ' '));
    expect(text.match(/\*jump/g)).toHaveLength(1);
  });

  it('POST /config with the list in another order keeps every value: an alias that would come first takes the anchor', async () => {
    const { app, file } = setup(ALIASES);
    const tunnels = (await list(app)).reverse();
    expect((await app.request('/config', send('POST', { tunnels }))).status).toBe(200);
    const text = file();
    expect(hosts(text)).toEqual({ web: 'user@bastion', cache: 'user@bastion', db: 'user@bastion' });
    expect(Object.keys(hosts(text))).toEqual(['web', 'cache', 'db']);
    expect(text).toMatch(/name: web\n\s+remote_host: &jump user@bastion/);
  });
});

describe('/config writes with merge keys', () => {
  it('GET lists merged fields as the entry\'s own', async () => {
    const { app } = setup(MERGES);
    expect((await list(app)).map((r) => [r.name, r.remote_host, r.direction])).toEqual([
      ['db', 'user@bastion', 'remote_to_local'],
      ['web', 'user@bastion', 'remote_to_local'],
    ]);
  });

  it('PUT of a merged field overrides it on that entry only; the merge stays for the rest', async () => {
    const { app, file } = setup(MERGES);
    const [db] = await list(app);
    expect((await app.request(`/config/${db!.hash}`, send('PUT', body(db!, { remote_host: 'user@other', direction: 'local_to_remote' })))).status).toBe(200);
    const text = file();
    expect(hosts(text)).toEqual({ db: 'user@other', web: 'user@bastion' });
    expect(text.match(/<<: \*defaults/g)).toHaveLength(2);
    const r = parseConfigText(text);
    const db2 = r.kind === 'ok' ? r.config.tunnels[0]! : null;
    expect(db2).toMatchObject({ direction: 'local_to_remote', ssh_options: expect.objectContaining({ ServerAliveInterval: '15' }) });
    expect(text).toContain('defaults: &defaults\n  remote_host: user@bastion\n  direction: remote_to_local');
  });

  it('DELETE of one merging entry leaves the other and the defaults as written', async () => {
    const { app, file } = setup(MERGES);
    const [db] = await list(app);
    expect((await app.request(`/config/${db!.hash}`, send('DELETE'))).status).toBe(200);
    expect(hosts(file())).toEqual({ web: 'user@bastion' });
    expect(file()).toContain('defaults: &defaults');
  });
});

describe('a file whose aliases cannot be read', () => {
  it('is refused with where it goes wrong, and nothing is written', async () => {
    const broken = 'tunnels:\n  - name: db\n    remote_host: *nowhere\n    remote_port: 1\n    local_port: 2\n';
    const { app, file } = setup(broken);
    const r = await app.request('/config/new', send('POST', { name: 'n', remote_host: 'h', remote_port: '3', local_port: '4' }));
    expect(r.status).toBe(409);
    const e = ((await r.json()) as { error: { code: string; message: string } }).error;
    expect(e.code).toBe('config_not_editable');
    expect(e.message).toContain('nowhere');
    expect(file()).toBe(broken);
  });
});
