// The two containers of deploy/kubernetes, run as their manifests say, without a
// cluster: each in a network namespace of its own (the daemon's API then really is on
// 127.0.0.1:8080, as with host networking on a node), as the manifest's uid and groups,
// with the image's environment overridden by the manifest's, the ConfigMap and the
// Secret laid out as the kubelet lays them out (links into ..data, root-owned, the
// Secret's mode with fsGroup applied), through the image's entrypoint. Then the
// kubelet's own probe from the manifest, and what docs/kubernetes.md runs with
// `kubectl exec`. Paths are the image's, under a scratch folder.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CLI, MAIN, REPO } from '../e2e/daemon-harness.js';

type Obj = { kind: string; metadata: { name: string }; spec: any; data?: Record<string, string> };

let tmp: string;
let objects: Obj[];
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tm-pods-'));
  chmodSync(tmp, 0o755);
  const text = execFileSync('kubectl', ['kustomize', join(REPO, 'deploy/kubernetes')], { encoding: 'utf8' });
  objects = parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as Obj);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;

/** The Dockerfile's ENV of the last stage. */
function imageEnv(): Record<string, string> {
  const text = readFileSync(join(REPO, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const last = text.split(/^FROM /m).at(-1)!;
  const env: Record<string, string> = {};
  for (const m of last.matchAll(/^ENV (.+)$/gm)) for (const kv of m[1]!.matchAll(/(\w+)=(\S+)/g)) env[kv[1]!] = kv[2]!;
  return env;
}

/** A volume as the kubelet lays out a ConfigMap or Secret: files in a timestamped folder, links through ..data. */
function atomicVolume(dir: string, files: Record<string, string>, mode: number, group: number): void {
  const stamp = '..2026_11_27_10_00_00.123456789';
  mkdirSync(join(dir, stamp), { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755);
  for (const [name, text] of Object.entries(files)) {
    const file = join(dir, stamp, name);
    writeFileSync(file, text);
    chownSync(file, 0, group);
    chmodSync(file, mode);
    symlinkSync(`..data/${name}`, join(dir, name));
  }
  symlinkSync(stamp, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
}

/**
 * Runs `container` of `dep` in its own namespaces through tests/deploy/pod-run.mjs.
 * `volume(name, path)` fills each mounted volume at its (prefixed) mount path.
 */
async function runPod(name: string, dep: Obj, opts: { volume: (v: any, path: string) => void; extraEnv?: Record<string, string>; sshd?: object; exec?: string[][]; waitTunnel?: boolean; waitLog?: string }) {
  const root = join(tmp, name);
  const under = (p: string) => join(root, p);
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  const uid: number = pod.securityContext.runAsUser;
  const gid: number = pod.securityContext.runAsGroup;
  const groups = [gid, ...(pod.securityContext.fsGroup !== undefined ? [pod.securityContext.fsGroup] : [])];

  // The image's account for that uid (ssh needs it), home under the scratch root.
  const image = imageEnv();
  const etc = under('etc');
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, 'passwd'), `${readFileSync('/etc/passwd', 'utf8')}tunnel:x:${uid}:${gid}::${under(image.HOME!)}:/usr/sbin/nologin\n`);
  writeFileSync(join(etc, 'group'), `${readFileSync('/etc/group', 'utf8')}tunnel:x:${gid}:\n`);
  // The folders the image holds (the Dockerfile's `install -d -m 755 …`), root's.
  const made = /install -d -m 755 ((?:\/\S+ ?)+)/.exec(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  if (made === null) throw new Error('the Dockerfile makes no folders with install -d -m 755');
  for (const f of made[1]!.trim().split(' ')) {
    mkdirSync(under(f), { recursive: true });
    for (let d = under(f); d !== tmp; d = dirname(d)) chmodSync(d, 0o755);
  }

  // The image's programs, as the Dockerfile makes them.
  const bin = under('bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'tunnel-manager'), `#!/bin/sh\nexec ${process.execPath} ${MAIN} "$@"\n`, { mode: 0o755 });
  writeFileSync(join(bin, 'tunnel-cli'), `#!/bin/sh\nexec ${process.execPath} ${CLI} "$@"\n`, { mode: 0o755 });

  // Volumes: emptyDirs as the kubelet makes them (root's, 0777; with fsGroup that group
  // and the setgid bit), the rest as asked.
  const fsGroup: number | undefined = pod.securityContext.fsGroup;
  for (const m of c.volumeMounts) {
    const v = pod.volumes.find((x: any) => x.name === m.name);
    const path = under(m.mountPath);
    if (v.emptyDir !== undefined) {
      mkdirSync(path, { recursive: true });
      chownSync(path, 0, fsGroup ?? 0);
      chmodSync(path, fsGroup === undefined ? 0o777 : 0o2777);
    } else {
      mkdirSync(dirname(path), { recursive: true });
      opts.volume(v, path);
    }
  }

  // The image's environment, then the container's (secretKeyRef and envFrom are optional: unset).
  const env: Record<string, string> = { ...image };
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  for (const [k, v] of Object.entries(env)) if (v.startsWith('/')) env[k] = under(v);
  Object.assign(env, opts.extraEnv ?? {}, { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin` });

  // A named port is the container's port of that name, as the kubelet reads it.
  const probe = structuredClone(c.readinessProbe);
  if (typeof probe.tcpSocket?.port === 'string') probe.tcpSocket.port = c.ports.find((p: any) => p.name === probe.tcpSocket.port).containerPort;
  const spec = { uid, gid, groups, entrypoint: join(REPO, 'docker/entrypoint.sh'), args: c.args ?? [], env, probe, sshd: opts.sshd, exec: opts.exec, waitTunnel: opts.waitTunnel, waitLog: opts.waitLog };
  writeFileSync(under('spec.json'), JSON.stringify(spec));
  const r = await execa(
    'unshare',
    ['-mn', 'sh', '-c', 'mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group && ip link set lo up && exec "$2" "$3" "$4"', 'sh', etc, process.execPath, join(REPO, 'tests/deploy/pod-run.mjs'), under('spec.json')],
    { reject: false },
  );
  if (r.exitCode !== 0 || r.stdout === '') throw new Error(`pod-run failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { probe: any; exec: { code: number; stdout: string; stderr: string }[]; status: any[] | null; log: string; exitCode: number | null; error?: string };
}

describe('the pods of deploy/kubernetes, run without a cluster', () => {
  it('the daemon: through the entrypoint as uid 911, the shipped tunnels RUNNING through the Secret, /health answering the probe, tunnel-cli by kubectl exec, a clean stop', async () => {
    const dep = find('Deployment', 'tunnel-manager');
    const pod = dep.spec.template.spec;
    const cm = find('ConfigMap', 'tunnel-manager-config');
    const sshdDir = join(tmp, 'sshd');
    mkdirSync(sshdDir);
    for (const k of ['host_key', 'client_key']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(sshdDir, k)]);
    const port = 2222;
    // The tunnels' remote_host, named in the Secret's SSH config as a user would.
    const host = (cm.data!['config.yaml']!.match(/remote_host: (\S+)/) ?? [])[1]!;
    const result = await runPod('daemon', dep, {
      sshd: { dir: sshdDir, port },
      waitTunnel: true,
      // What docs/kubernetes.md runs with kubectl exec.
      exec: [['tunnel-cli', 'status'], ['tunnel-manager', 'check']],
      volume: (v, path) => {
        if (v.configMap !== undefined) return atomicVolume(path, cm.data!, 0o644, 0);
        // What defaultMode and fsGroup make of the Secret's files: root:fsGroup, defaultMode | 0440.
        const mode = v.secret.defaultMode | 0o440;
        atomicVolume(path, {
          config: `Host ${host}\n  HostName 127.0.0.1\n  Port ${port}\n  User root\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes\n`,
          id_ed25519: readFileSync(join(sshdDir, 'client_key'), 'utf8'),
          known_hosts: `[127.0.0.1]:${port} ${readFileSync(join(sshdDir, 'host_key.pub'), 'utf8')}`,
        }, mode, pod.securityContext.fsGroup);
      },
    });
    expect(result.error, result.log).toBeUndefined();
    expect(result.probe).toMatchObject({ status: 200, body: { ok: true, config: { valid: true } } });
    expect(result.status!.map((t) => [t.name, t.status])).toEqual([['db', 'RUNNING']]);
    const [status, check] = result.exec;
    expect(status).toMatchObject({ code: 0 });
    expect(status!.stdout).toMatch(/db .*RUNNING/);
    // check passes in the pod, and has nothing to tighten in the Secret the manifest made.
    expect(check, JSON.stringify(check)).toMatchObject({ code: 0 });
    expect(check!.stdout).toMatch(/no problems found\n$/);
    expect(check!.stdout).not.toMatch(/warning/);
    // Nothing to warn about in a Secret the manifest made, and a clean stop.
    expect(result.log).not.toMatch(/warning|ssh_dir_warning/);
    expect(result.exitCode).toBe(0);
  });

  it('the proxy: through the entrypoint as uid 911, listening where its Service and tcpSocket probe point', async () => {
    const dep = find('Deployment', 'tunnel-manager-proxy');
    const cm = find('ConfigMap', 'tunnel-manager-proxy-config');
    const result = await runPod('proxy', dep, {
      extraEnv: { PROXY_KEY: 'pod-test-key' },
      waitLog: '"event":"proxy_started"',
      volume: (v, path) => atomicVolume(path, cm.data!, 0o644, 0),
    });
    expect(result.error, result.log).toBeUndefined();
    expect(result.probe).toEqual({ connected: true });
    expect(result.log).toContain('"event":"proxy_started","listen":"0.0.0.0:8080"');
    expect(result.exitCode).toBe(0);
  });
});
