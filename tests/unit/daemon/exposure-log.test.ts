// The daemon tells exposure (SPEC §5) at load and reload: once per tunnel and finding in
// its log, and every one in force in its config health (for /health/details and the
// /config answers); an invalid or missing file changes what is in force, and so what is
// told, no more than it changes the tunnels.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createConfigReload } from '../../../src/daemon/config-reload.js';
import { createExposureLog } from '../../../src/daemon/exposure-log.js';
import type { SupervisorApi } from '../../../src/supervisor/types.js';
import type { OwnListener } from '../../../src/tunnel/exposure.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';
import { valid } from '../config/helpers.js';

const socks = (name: string, local: string) => `  - name: ${name}\n    remote_host: bastion\n    local_port: "${local}"\n    direction: socks\n`;
const expose = (name: string, remote: string, local: string) => `  - name: ${name}\n    remote_host: bastion\n    remote_port: "${remote}"\n    local_port: "${local}"\n    direction: local_to_remote\n`;
const specs = (entries: string) => valid(`tunnels:\n${entries}`).config.tunnels;

describe('createExposureLog', () => {
  test('logs each finding once: at the first load all, at a reload only the new ones, again after it was gone', () => {
    const logged: Record<string, unknown>[] = [];
    const tell = createExposureLog('default', () => [], (e) => logged.push(e));
    const open = specs(socks('open', '0.0.0.0:1080'));
    const found = tell(open);
    expect(found).toMatchObject([{ name: 'open', line: 2, exposure: { kind: 'open_listener' } }]);
    expect(logged).toEqual([{ event: 'exposure_warning', tunnel: 'open', hash: open[0]!.hash, line: 2, warning: found[0]!.message }]);
    expect(found[0]!.message).toMatch(/^its SOCKS proxy listens on every address of this machine \(0\.0\.0\.0:1080\)/);
    // The same tunnel at the next reload: in force, not told again.
    expect(tell(open)).toHaveLength(1);
    expect(logged).toHaveLength(1);
    // A loopback tunnel tells nothing; the open one gone and back is told again.
    expect(tell(specs(socks('closed', '127.0.0.1:1080')))).toEqual([]);
    tell(open);
    expect(logged).toHaveLength(2);
  });

  test('the own listeners are read at each load (the API\'s port is known once bound)', () => {
    let own: OwnListener[] = [{ kind: 'api', host: '127.0.0.1', port: 0 }];
    const logged: Record<string, unknown>[] = [];
    const tell = createExposureLog('default', () => own, (e) => logged.push(e));
    const t = specs(expose('out', '9000', '127.0.0.1:43210'));
    expect(tell(t)).toEqual([]);
    own = [{ kind: 'api', host: '127.0.0.1', port: 43210 }];
    expect(tell(t)).toMatchObject([{ name: 'out', exposure: { kind: 'own_listener', listener: 'api', reach: 'server_accounts' } }]);
    expect(logged).toHaveLength(1);
  });
});

describe('the config in force tells what runs', () => {
  let dir: string;
  let path: string;
  const supervisor = {
    async apply(tunnels: readonly TunnelSpec[]) {
      return { added: tunnels.map((t) => t.hash), removed: [], unchanged: [] };
    },
  } as unknown as SupervisorApi;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tm-exposure-'));
    path = join(dir, 'config.yaml');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a valid file, one with a problem, one that is not YAML, and none at all', async () => {
    const logged: Record<string, unknown>[] = [];
    const engine = createConfigReload({ configPath: path, mode: 'default', supervisor, log: (e) => logged.push(e), ownListeners: () => [{ kind: 'api', host: '127.0.0.1', port: 8080 }] });
    const told = () => logged.filter((e) => e.event === 'exposure_warning').map((e) => e.tunnel);
    await writeFile(path, `tunnels:\n${socks('open', '[::]:1080')}${expose('api-out', '0.0.0.0:9000', '8080')}`);
    await engine.reload();
    expect(engine.configHealth().exposure.map((e) => [e.name, e.exposure.kind])).toEqual([['open', 'open_listener'], ['api-out', 'own_listener']]);
    expect(told()).toEqual(['open', 'api-out']);
    // The exposure_warning lines come before the reload's own line.
    expect(logged.map((e) => e.event)).toEqual(['exposure_warning', 'exposure_warning', 'reload']);

    // An entry with a problem next to a new open one: the new one runs and is told; the others stay told.
    await writeFile(path, `tunnels:\n${socks('open', '[::]:1080')}${expose('api-out', '0.0.0.0:9000', '8080')}${socks('lan', '192.168.7.7:1081')}  - name: broken\n    remote_host: bastion\n`);
    await engine.reload();
    expect(engine.configHealth().applied).toBe('partial');
    expect(engine.configHealth().exposure.map((e) => e.name)).toEqual(['open', 'api-out', 'lan']);
    expect(told()).toEqual(['open', 'api-out', 'lan']);

    // Not YAML, then deleted: nothing changes in force, so nothing changes in what is told.
    await writeFile(path, 'tunnels: [unclosed\n');
    await engine.reload();
    expect(engine.configHealth().applied).toBe('none');
    expect(engine.configHealth().exposure.map((e) => e.name)).toEqual(['open', 'api-out', 'lan']);
    await rm(path);
    await engine.reload();
    expect(engine.configHealth().missing).toBe(true);
    expect(engine.configHealth().exposure).toHaveLength(3);

    // A file without them: nothing is told any more.
    await writeFile(path, `tunnels:\n${socks('open', '127.0.0.1:1080')}`);
    await engine.reload();
    expect(engine.configHealth().exposure).toEqual([]);
    expect(told()).toHaveLength(3);
  });
});
