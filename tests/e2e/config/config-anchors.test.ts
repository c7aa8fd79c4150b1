// The built daemon over a config that shares values through a YAML merge key and an
// anchor, edited through its /config API: tunnels whose fields come from `<<: *defaults`
// run, an edit of one leaves the other running untouched (same pid), and deleting the
// entry that holds the anchor keeps the file valid and the other tunnel as it was.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load.js';
import { echoServer, port, roundTrip, sshd, startDaemon, type Daemon, type Sshd } from '../daemon-harness.js';

let server: Sshd;
let echo: { close(): Promise<void> };
let echoPort: number;
let d: Daemon;
let ports: number[];

interface Rec { name: string; remote_host: string; remote_port: string; local_port: string; direction: string; interactive: boolean; hash: string }
interface Status { hash: string; name: string; status: string; pid: number | null }

const records = () => d.json<{ tunnels: Rec[] }>('/config').then((b) => b.tunnels);
const send = (method: string, body?: unknown): RequestInit => ({
  method,
  headers: { 'content-type': 'application/json' },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});
const file = () => readFileSync(d.configPath, 'utf8');

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
  ports = [await port(), await port(), await port()];
  const config = `# two tunnels through one host
defaults: &defaults
  remote_port: ${echoPort}
  direction: remote_to_local
tunnels:
  - <<: *defaults
    name: first
    remote_host: &host ${server.alias}   # the test sshd
    local_port: "127.0.0.1:${ports[0]}"
  - <<: *defaults
    name: second
    remote_host: *host
    local_port: "127.0.0.1:${ports[1]}"
`;
  d = await startDaemon({ config, sshConfigPath: server.sshConfigPath });
}, 60_000);

afterAll(async () => {
  await d?.cleanup();
  await echo?.close();
  await server?.stop();
});

describe('a config with a merge key and an anchor, edited through /config', () => {
  it('runs the tunnels whose fields a merge key brings', async () => {
    await d.waitState('first', 'RUNNING');
    await d.waitState('second', 'RUNNING');
    expect(await roundTrip(ports[1]!, 'merged')).toBe('merged');
    expect((await records()).map((r) => [r.name, r.remote_host, r.remote_port])).toEqual([
      ['first', server.alias, String(echoPort)],
      ['second', server.alias, String(echoPort)],
    ]);
  });

  it('an edit of the first moves it to its new port and leaves the second running as it was', async () => {
    const second = await d.waitState('second', 'RUNNING') as Status;
    const [first] = await records();
    const r = await d.api(`/config/${first!.hash}`, send('PUT', { ...first, hash: undefined, local_port: `127.0.0.1:${ports[2]}` }));
    expect(r.status).toBe(200);
    await d.waitFor('first on its new port', async () => (await roundTrip(ports[2]!, 'moved').catch(() => '')) === 'moved');
    expect(file().match(/<<: \*defaults/g)).toHaveLength(2);
    const now = (await d.json<Status[]>('/status')).find((s) => s.name === 'second');
    expect(now).toMatchObject({ hash: second.hash, pid: second.pid, status: 'RUNNING' });
  });

  it('deleting the entry that holds the anchor keeps the file valid and the second tunnel untouched', async () => {
    const second = await d.waitState('second', 'RUNNING') as Status;
    const [first] = await records();
    expect((await d.api(`/config/${first!.hash}`, send('DELETE'))).status).toBe(200);
    await d.waitFor('first gone', async () => !(await d.json<Status[]>('/status')).some((s) => s.name === 'first'));
    const text = file();
    expect(parseConfigText(text).kind).toBe('ok');
    expect(text).toContain(`remote_host: &host ${server.alias}`);
    expect(await d.json('/health/details')).toMatchObject({ config: { valid: true, applied: 'all' } });
    const now = (await d.json<Status[]>('/status')).find((s) => s.name === 'second');
    expect(now).toMatchObject({ hash: second.hash, pid: second.pid, status: 'RUNNING' });
    expect(await roundTrip(ports[1]!, 'still here')).toBe('still here');
  });
});
