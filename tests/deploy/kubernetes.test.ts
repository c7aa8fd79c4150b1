// deploy/kubernetes: rendered by kustomize as `kubectl apply -k` would, every object
// checked against the Kubernetes API's schema (kubernetes-models: its validators for
// types, formats and required fields, its TypeScript types for unknown fields, which
// `kubectl apply` refuses), and every setting the manifests give the daemon checked
// against what the image and the daemon really use. No cluster needed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import { daemonUrl } from '../../src/settings/settings.js';
import { REPO } from '../e2e/daemon-harness.js';

const K8S = join(REPO, 'deploy/kubernetes');

type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: any };

/**
 * kubectl's kustomize: what `kubectl apply -k DIR` sends. It needs kubectl 1.22 or
 * newer (kustomize v4.2: folders as resources, `labels`); Debian 12's kubernetes-client
 * (1.20, kustomize v2.0.3) cannot render these files, and no npm package ships
 * kustomize, so a machine without a recent kubectl fails here, saying so.
 */
function kustomize(dir: string): Obj[] {
  let version: string;
  try {
    version = execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  } catch (e) {
    throw new Error(`kubectl is needed to render deploy/kubernetes as kubectl apply -k does (kubectl 1.22 or newer): ${(e as Error).message}`, { cause: e });
  }
  const k = /Kustomize Version: v(\d+)\.(\d+)/.exec(version);
  if (k === null || Number(k[1]) < 4 || (Number(k[1]) === 4 && Number(k[2]) < 2)) {
    throw new Error(`kubectl's kustomize is too old to render deploy/kubernetes (needs kubectl 1.22+, kustomize v4.2+); kubectl version --client says:\n${version}`);
  }
  const text = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  // Kubernetes reads manifests as YAML 1.1.
  return parseAllDocuments(text, { version: '1.1' }).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as Obj;
  });
}

/** The module of kubernetes-models for an object: `apps/v1` + Deployment → kubernetes-models/apps/v1/Deployment. */
const modelPath = (o: Obj) => `kubernetes-models/${o.apiVersion}/${o.kind}`;

/** The API schema's own validator: types, formats (int32, quantities…), required fields. */
async function schemaErrors(o: Obj): Promise<string | null> {
  const mod = (await import(modelPath(o))) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = mod[o.kind];
  if (Model === undefined) return `kubernetes-models has no ${o.kind} in ${modelPath(o)}`;
  try {
    new Model(o).validate();
    return null;
  } catch (e) {
    return `${o.kind}/${o.metadata.name}: ${(e as Error).message}`;
  }
}

/**
 * Unknown or misspelt fields, which the schema's validators let through (the API's
 * schema allows extra fields) but `kubectl apply` refuses (strict field validation):
 * each object is written as a literal of its kubernetes-models type and compiled, so
 * TypeScript's excess-property check names every field the API does not have. One
 * compiler run for all objects; the answer is the errors of each object, in order.
 * A null is dropped first: the API takes it as "not set", the types have no null.
 */
async function unknownFields(objects: Obj[]): Promise<string[]> {
  const dir = mkdtempSync(join(REPO, 'node_modules', '.k8s-fields-'));
  try {
    const literal = (o: Obj) => JSON.stringify(o, (_k, v: unknown) => (v === null ? undefined : v));
    const lines = objects.map((o, i) => `import type { I${o.kind} as T${i} } from '${modelPath(o)}';\nexport const o${i}: T${i} = ${literal(o)};`);
    writeFileSync(join(dir, 'objects.ts'), lines.join('\n'));
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const r = await execa(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', join(dir, 'objects.ts')], { reject: false });
    const out = objects.map(() => '');
    for (const line of (r.stdout + r.stderr).split('\n').filter((l) => l !== '')) {
      // Object i is on line 2i + 2; anything else (a missing module) is everyone's problem.
      const m = /objects\.ts\((\d+),\d+\): (.*)$/.exec(line);
      const i = m === null ? -1 : (Number(m[1]) - 2) / 2;
      if (m !== null && out[i] !== undefined) out[i] += `${m[2]}\n`;
      else out.forEach((_, j) => (out[j] += `${line}\n`));
    }
    if (r.exitCode !== 0 && out.every((e) => e === '')) throw new Error(`tsc failed: ${r.stdout}${r.stderr}`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const byKind = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);
const one = (objs: Obj[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined) throw new Error(`no ${kind}/${name} among ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
};

/** The image's ENV lines and its account, from the Dockerfile the pods run. */
function image(): { env: Record<string, string>; uid: number } {
  const text = readFileSync(join(REPO, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^ENV (.+)$/gm)) for (const kv of m[1]!.matchAll(/(\w+)=(\S+)/g)) env[kv[1]!] = kv[2]!;
  const uid = /useradd --uid (\d+) [^\n]* tunnel\b/.exec(text);
  if (uid === null) throw new Error('the Dockerfile makes no tunnel account');
  return { env, uid: Number(uid[1]) };
}

/** The Secret as docs/kubernetes.md makes it (kubectl create secret … --dry-run=client works offline). */
function documentedSecret(): Obj {
  const dir = mkdtempSync(join(REPO, 'node_modules', '.k8s-secret-'));
  try {
    for (const f of ['config', 'id_ed25519', 'known_hosts']) writeFileSync(join(dir, f), `${f}\n`);
    const out = execFileSync('kubectl', ['create', 'secret', 'generic', 'tunnel-manager-ssh', '--from-file=config=./config', '--from-file=id_ed25519=./id_ed25519', '--from-file=known_hosts=./known_hosts', '--dry-run=client', '-o', 'yaml'], { cwd: dir, encoding: 'utf8' });
    const secret = parseAllDocuments(out)[0]!.toJS() as Obj;
    expect(Object.keys(secret.data).sort()).toEqual(['config', 'id_ed25519', 'known_hosts']);
    return secret;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('deploy/kubernetes, rendered by kustomize', () => {
  it('every object of the base, of the overlay and the documented Secret is valid; a broken copy is caught', async () => {
    const base = kustomize(K8S);
    expect(base.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/tunnel-manager-config',
      'ConfigMap/tunnel-manager-proxy-config',
      'Deployment/tunnel-manager',
      'Deployment/tunnel-manager-proxy',
      'HorizontalPodAutoscaler/tunnel-manager-proxy',
      'Service/tunnel-manager-proxy',
    ]);
    const overlay = kustomize(join(K8S, 'overlays/second-host'));
    const good = [...base, ...overlay, documentedSecret()];
    expect((await Promise.all(good.map(schemaErrors))).filter((e) => e !== null)).toEqual([]);

    // What kubectl apply would refuse is caught: a misspelt field, a wrong type, a missing port.
    const dep = one(base, 'Deployment', 'tunnel-manager');
    const misspelt = structuredClone(dep);
    misspelt.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true;
    const fields = await unknownFields([...good, misspelt]);
    expect(fields.slice(0, good.length)).toEqual(good.map(() => ''));
    expect(fields[good.length]).toMatch(/readOnlyRootFileSystem.*does not exist in type 'ISecurityContext'/);
    const wrongType = structuredClone(dep);
    wrongType.spec.replicas = '1';
    expect(await schemaErrors(wrongType)).toMatch(/replicas must be integer/);
    const noPort = structuredClone(dep);
    delete noPort.spec.template.spec.containers[0].livenessProbe.httpGet.port;
    expect(await schemaErrors(noPort)).toMatch(/livenessProbe\/httpGet must have required property port/);
  });

  it('the overlay for a second host: its own names, node, config and selector, and no second proxy', async () => {
    const base = kustomize(K8S);
    const objs = kustomize(join(K8S, 'overlays/second-host'));
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(['ConfigMap/tunnel-manager-config-node-b', 'Deployment/tunnel-manager-node-b']);
    const a = one(base, 'Deployment', 'tunnel-manager');
    const b = one(objs, 'Deployment', 'tunnel-manager-node-b');
    expect(b.spec.template.spec.nodeSelector['kubernetes.io/hostname']).not.toBe(a.spec.template.spec.nodeSelector['kubernetes.io/hostname']);
    expect(b.spec.template.spec.volumes.find((v: any) => v.name === 'config').configMap.name).toBe('tunnel-manager-config-node-b');
    // Neither Deployment takes the other's pod (nor the proxy's) for its own.
    for (const [dep, others] of [[a, [b, ...byKind(base, 'Deployment').filter((d) => d !== a)]], [b, [a]]] as const) {
      for (const other of others) expect(matches(dep.spec.selector.matchLabels, other.spec.template.metadata.labels), `${dep.metadata.name} selects ${other.metadata.name}`).toBe(false);
    }
    // Its tunnels differ from the first host's and load as the daemon loads them.
    const cfg = one(objs, 'ConfigMap', 'tunnel-manager-config-node-b').data['config.yaml'];
    expect(cfg).not.toBe(one(base, 'ConfigMap', 'tunnel-manager-config').data['config.yaml']);
  });

  it("the daemon: one replica, Recreate, /health probes where the API listens, non-root with a read-only root, writable where it writes", () => {
    const { env, uid } = image();
    const dep = one(kustomize(K8S), 'Deployment', 'tunnel-manager');
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    // Host networking: the kubelet probes the node's loopback, where the daemon's default listener is.
    expect(pod.hostNetwork).toBe(true);
    const api = new URL(daemonUrl({}));
    for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) {
      expect(probe.httpGet).toEqual({ host: api.hostname, port: Number(api.port), path: '/health' });
    }
    expect(pod.securityContext).toMatchObject({ runAsUser: uid, runAsGroup: uid, runAsNonRoot: true, fsGroup: uid });
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    const envOf = Object.fromEntries(c.env.map((e: any) => [e.name, e.value]));
    // The entrypoint, run as a non-root uid, requires PUID to name that uid.
    expect(envOf.PUID).toBe(String(uid));
    expect(envOf.PGID).toBe(String(uid));
    expect(c.resources.requests.cpu).toBeTruthy();
    expect(c.resources.limits.memory).toBeTruthy();
    const mounts = Object.fromEntries(c.volumeMounts.map((m: any) => [m.mountPath, m]));
    const volume = (name: string) => pod.volumes.find((v: any) => v.name === name);
    // ssh's temporary config goes to /tmp, an emptyDir.
    expect(volume(mounts['/tmp'].name).emptyDir).toBeDefined();
    // The state dir and the socket's folder are the daemon's own, made private (0700, its
    // uid) inside a writable emptyDir: an emptyDir itself is root's and open to everyone,
    // which the daemon refuses for them.
    const stateDir = envOf.TUNNEL_STATE_DIR ?? env.TUNNEL_STATE_DIR!;
    for (const path of [stateDir, posix.dirname(envOf.TUNNEL_SOCKET ?? env.TUNNEL_SOCKET!)]) {
      const holder = c.volumeMounts.find((m: any) => path.startsWith(`${m.mountPath}/`));
      expect(holder, path).toBeDefined();
      expect(holder.readOnly ?? false).toBe(false);
      expect(volume(holder.name).emptyDir).toBeDefined();
    }
    // The config file as the ConfigMap's key, the SSH directory as the Secret.
    expect(mounts[posix.dirname(env.TUNNEL_CONFIG!)]).toMatchObject({ readOnly: true });
    expect(volume(mounts[posix.dirname(env.TUNNEL_CONFIG!)].name).configMap.name).toBe('tunnel-manager-config');
    expect(posix.basename(env.TUNNEL_CONFIG!)).toBe('config.yaml');
    expect(posix.dirname(env.SSH_CONFIG!)).toBe(env.SSH_DIR);
    expect(mounts[env.SSH_DIR!]).toMatchObject({ readOnly: true });
    // Owner and group may read, no one else: with fsGroup the key is root:911 0440, which ssh accepts for uid 911.
    expect(volume(mounts[env.SSH_DIR!].name).secret).toEqual({ secretName: 'tunnel-manager-ssh', defaultMode: 0o440 });
  });

  it('the proxy: its own Deployment on the pod address, a Service on its port, an autoscaler on its CPU request', () => {
    const objs = kustomize(K8S);
    const dep = one(objs, 'Deployment', 'tunnel-manager-proxy');
    const c = dep.spec.template.spec.containers[0];
    expect(c.args).toEqual(['proxy']);
    const envOf = Object.fromEntries(c.env.map((e: any) => [e.name, e.value]));
    const port = c.ports.find((p: any) => p.name === 'http').containerPort;
    expect(envOf.TUNNEL_API_LISTEN).toBe(`0.0.0.0:${port}`);
    expect(c.readinessProbe.tcpSocket.port).toBe('http');
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(dep.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    // The entrypoint makes the socket's folder inside a writable emptyDir.
    const socketDir = posix.dirname(image().env.TUNNEL_SOCKET!);
    expect(c.volumeMounts.some((m: any) => socketDir.startsWith(`${m.mountPath}/`) && !m.readOnly)).toBe(true);
    const svc = one(objs, 'Service', 'tunnel-manager-proxy');
    expect(svc.spec.ports[0].targetPort).toBe('http');
    // Stored responses live in one replica's memory (docs/proxy.md): a client stays on its replica.
    expect(svc.spec.sessionAffinity).toBe('ClientIP');
    expect(matches(svc.spec.selector, dep.spec.template.metadata.labels)).toBe(true);
    expect(matches(svc.spec.selector, one(objs, 'Deployment', 'tunnel-manager').spec.template.metadata.labels)).toBe(false);
    const hpa = one(objs, 'HorizontalPodAutoscaler', 'tunnel-manager-proxy');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: dep.metadata.name });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(c.resources.requests.cpu).toBeTruthy();
  });

  it('every config.yaml in the ConfigMaps loads as the daemon and the proxy load it', async () => {
    const dir = mkdtempSync(join(REPO, 'node_modules', '.k8s-config-'));
    try {
      const maps = [...byKind(kustomize(K8S), 'ConfigMap'), ...byKind(kustomize(join(K8S, 'overlays/second-host')), 'ConfigMap')];
      expect(maps).toHaveLength(3);
      for (const m of maps) {
        mkdirSync(join(dir, m.metadata.name));
        const file = join(dir, m.metadata.name, 'config.yaml');
        writeFileSync(file, m.data['config.yaml']);
        const r = await loadConfigFile(file, { mode: 'default' });
        expect(r.kind, `${m.metadata.name}: ${JSON.stringify(r)}`).toBe('ok');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
