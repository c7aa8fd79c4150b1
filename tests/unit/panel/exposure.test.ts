// The panel tells what a tunnel opens beyond this machine (SPEC §5) with the daemon's
// own rule: on each entry of the file's view, and for the form while it is filled in;
// the page words it from catalogue keys some of which it picks by value.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigStore } from '../../../src/config-edit/store.js';
import { createPanelApp } from '../../../src/panel/app.js';
import { loadAssets, STATIC_DIR } from '../../../src/panel/assets.js';
import { Sessions } from '../../../src/panel/auth.js';
import { createDaemonClient } from '../../../src/panel/daemon-client.js';
import { EventsHub } from '../../../src/panel/events-hub.js';
import type { Reach, OwnListenerKind } from '../../../src/tunnel/exposure.js';

const HOST = '127.0.0.1:5000';
const CONFIG = `tunnels:
  - name: open-socks
    remote_host: bastion
    local_port: "0.0.0.0:1080"
    direction: socks
  - name: private
    remote_host: bastion
    remote_port: 5432
    local_port: 15432
  - name: api-out
    remote_host: bastion
    remote_port: "0.0.0.0:9000"
    local_port: "127.0.0.1:9090"
    direction: local_to_remote
`;

const dirs: string[] = [];
const hubs: EventsHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(apiUrl: string) {
  const dir = mkdtempSync(join(tmpdir(), 'tm-panel-exposure-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'config'));
  const configPath = join(dir, 'config', 'config.yaml');
  writeFileSync(configPath, CONFIG);
  const refused = (() => Promise.reject(Object.assign(new Error('refused'), { cause: { code: 'ECONNREFUSED' } }))) as typeof fetch;
  const daemon = createDaemonClient(apiUrl, null, { fetchImpl: refused });
  const hub = new EventsHub(daemon);
  hubs.push(hub);
  const app = createPanelApp({
    password: null,
    sessions: new Sessions(),
    store: new ConfigStore({ path: configPath, writer: 'panel', mode: 'default', backupDir: join(dir, 'backups'), keepBackups: 3, log: () => undefined }),
    mode: 'default',
    sshHosts: async () => [],
    daemon,
    hub,
    shutdown: new AbortController().signal,
    assets: await loadAssets(),
    log: () => undefined,
  });
  return (method: string, path: string, body?: unknown) =>
    app.request(`http://${HOST}${path}`, {
      method,
      headers: { host: HOST, origin: `http://${HOST}`, 'x-panel-request': '1', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

type Entry = { fields: { name: string }; exposure: { kind: string; listener?: string; message: string; reach: string }[] };

describe('the panel\'s exposure warnings', () => {
  it('each entry of the file\'s view carries what it opens, with the daemon\'s sentence; a loopback one none', async () => {
    const req = await setup('http://127.0.0.1:9090');
    const body = (await (await req('GET', '/api/config')).json()) as { config: { entries: Entry[] } };
    const [socks, private_, apiOut] = body.config.entries;
    expect(socks!.exposure).toMatchObject([{ kind: 'open_listener', flag: '-D', all: true, listen: '0.0.0.0:1080', server: 'bastion', reach: 'local_network' }]);
    expect(socks!.exposure[0]!.message).toMatch(/^its SOCKS proxy listens on every address of this machine \(0\.0\.0\.0:1080\)/);
    expect(private_!.exposure).toEqual([]);
    // The daemon's API is where the panel's --api says: 9090 here, not the default 8080.
    expect(apiOut!.exposure).toMatchObject([{ kind: 'own_listener', listener: 'api', address: '127.0.0.1:9090', reach: 'server_network' }]);
  });

  it('a daemon elsewhere makes 9090 nobody\'s port: then it is only an -R open on every address of the server', async () => {
    const req = await setup('http://127.0.0.1:8080');
    const body = (await (await req('GET', '/api/config')).json()) as { config: { entries: Entry[] } };
    expect(body.config.entries[2]!.exposure.map((e) => e.kind)).toEqual(['remote_all']);
  });

  it('the form asks while it is filled in, and gets the same rule\'s answer', async () => {
    const req = await setup('http://127.0.0.1:8080');
    const ask = async (fields: Record<string, string>) =>
      (await req('POST', '/api/exposure', { fields: { name: 'x', remote_host: 'bastion', remote_port: '5432', direction: 'remote_to_local', ...fields } })).json() as Promise<{ exposure: Entry['exposure'] }>;
    expect((await ask({ local_port: '15432' })).exposure).toEqual([]);
    expect((await ask({ local_port: '[::]:15432' })).exposure).toMatchObject([{ kind: 'open_listener', flag: '-L', all: true, listen: '[::]:15432' }]);
    expect((await ask({ local_port: '5000', remote_port: '0.0.0.0:9', direction: 'local_to_remote' })).exposure).toMatchObject([{ kind: 'own_listener', listener: 'panel' }]);
    // Fields the daemon would refuse open nothing (the form shows their errors on save).
    expect((await ask({ local_port: '0.0.0.0:99999' })).exposure).toEqual([]);
    expect((await req('POST', '/api/exposure', { fields: { name: 'x' } })).status).toBe(400);
  });

  it('every language words every `who` and every listener the page picks by value', () => {
    const languages = JSON.parse(readFileSync(join(STATIC_DIR, 'i18n', 'languages.json'), 'utf8')) as { code: string }[];
    const reaches: Reach[] = ['local_accounts', 'local_network', 'server_accounts', 'server_network'];
    const listeners: OwnListenerKind[] = ['api', 'panel'];
    for (const { code } of languages) {
      const c = JSON.parse(readFileSync(join(STATIC_DIR, 'i18n', `${code}.json`), 'utf8')) as Record<string, string>;
      const missing = [...reaches.map((r) => `exposure.who.${r}`), ...listeners.map((l) => `exposure.listener.${l}`)].filter((k) => !(k in c));
      expect(missing, code).toEqual([]);
    }
  });
});
