// `tunnel-manager check` on configs written for the reference and on broken entries:
// the built command with a real `ssh -G` reading a private SSH config.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { fences } from '../cli-docs-blocks.js';
import { MAIN } from '../daemon-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'tm-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sshConfig = join(dir, 'ssh_config');
writeFileSync(sshConfig, 'Host one\n  HostName 127.0.0.1\n  Port 2222\n  User alice\nHost two\n  HostName 127.0.0.1\n  Port 2222\n  User bob\nHost other\n  HostName 127.0.0.1\n  Port 2223\n', { mode: 0o600 });

function check(config: string, ssh = sshConfig): Promise<{ code: number; stdout: string }> {
  const path = join(dir, 'config.yaml');
  writeFileSync(path, config);
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, 'check', '--config', path, '--ssh-config', ssh, '--state-dir', join(dir, 'state')], { env: { PATH: process.env.PATH ?? '' } }, (e, stdout) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

const remote = (name: string, host: string, port: number) =>
  `  - name: ${name}\n    remote_host: ${host}\n    remote_port: ${port}\n    local_port: 8080\n    direction: local_to_remote\n`;

test('two tunnels listening on one server under two aliases are named, after ssh resolves them', async () => {
  const r = await check(`tunnels:\n${remote('first', 'one', 9000)}${remote('second', 'two', 9000)}${remote('elsewhere', 'other', 9000)}`);
  expect(r.stdout).toMatch(/tunnel "second" \(line 7\): it would listen on port 9000 of 127\.0\.0\.1:2222, where tunnel "first" \(line 2\) already listens: "one" and "two" are the same server/);
  expect(r.stdout).not.toMatch(/tunnel "elsewhere" \(line \d+\): it would listen/);
});

test('entries left out are marked so, and a file YAML refuses gets the migrate command as its fix', async () => {
  const partial = await check(`tunnels:\n${remote('first', 'one', 9000)}  - name: broken\n    remote_host: one\n`);
  expect(partial.code).toBe(1);
  expect(partial.stdout).toMatch(/line 7, column 5: tunnels\[1\]\.remote_port: expected .* \(this entry is left out; the others run\)/);
  const refused = await check(`tunnels:\n${remote('@home', 'one', 9000)}`);
  expect(refused.code).toBe(1);
  expect(refused.stdout).toContain(`fix: tunnel-manager migrate --config ${join(dir, 'config.yaml')} --write`);
});

test('hashes the reference computed from a misread value are listed with the reason', async () => {
  const r = await check(`tunnels:\n${remote("'quoted'", 'one', 9000)}`);
  expect(r.stdout).toMatch(/hash differs from autossh-tunnel-dockerized's: line 2, tunnel "quoted": hash [0-9a-f]{8} there → [0-9a-f]{8} here: name: the reference read "'quoted'", YAML reads "quoted": the reference kept the single quotes/);
});

test('with --ssh-config /dev/null the header says no SSH directory is checked, not that /dev is one', async () => {
  const r = await check('tunnels: []\n', '/dev/null');
  expect(r.stdout).toContain('SSH config:      /dev/null\n');
  expect(r.stdout).toContain('SSH directory:   (none: /dev/null is not a regular file, so no folder is checked)\n');
  expect(r.stdout).not.toMatch(/SSH directory: +\/dev\n/);
  // Nor is a Host entry to append to /dev/null offered as the fix for a host that does not resolve.
  const unresolved = await check('tunnels:\n  - name: db\n    remote_host: user@nohost.invalid\n    remote_port: 5432\n    local_port: 15432\n', '/dev/null');
  expect(unresolved.stdout).toContain('host name "nohost.invalid" does not resolve, and the SSH config /dev/null can hold no Host entry: use an SSH config file with a Host nohost.invalid entry and its HostName (--ssh-config), or a host name that resolves');
  expect(unresolved.stdout).not.toContain('>> /dev/null');
});

test("the README's and docs/proxy.md's sample configs (comments after values, keys only tunnel-manager reads) get no word about the reference's hashes", async () => {
  const pages = ['README.md', 'docs/proxy.md'].map((p) => readFileSync(join(import.meta.dirname, '../../..', p), 'utf8'));
  const samples = pages.map((page) => fences(page).find((f) => f.lang === 'yaml' && f.body.startsWith('tunnels:'))?.body);
  for (const sample of samples) {
    expect(sample).toMatch(/name: \w+ +#/);
    const r = await check(`${sample!}\n`);
    expect(r.stdout).not.toContain('autossh-tunnel-dockerized');
  }
  // The same entry in a file the reference could have run is told, with what to do.
  const reference = await check('tunnels:\n  - name: db   # primary\n    remote_host: one\n    remote_port: 5432\n    local_port: 15432\n');
  expect(reference.stdout).toMatch(/hash differs from autossh-tunnel-dockerized's: line 2, tunnel "db": .*the reference took the comment at the end of the line into the value; scripts that stored [0-9a-f]{8} need [0-9a-f]{8}, or write name: "db   # primary" to keep the reference's value and hash/);
});

test('a ${VAR} key whose variable is unset is a problem naming the field and the variable, with set-and-restart as the fix', async () => {
  const r = await check('tunnels: []\nproxy:\n  api_keys: ["${PROXY_KEY}"]\n  providers:\n    gpu:\n      base_url: http://127.0.0.1:9\n      api_key: ${UPSTREAM_KEY}\n');
  expect(r.code).toBe(1);
  expect(r.stdout).not.toContain('no problems found');
  expect(r.stdout).toContain(`${join(dir, 'config.yaml')}: proxy.api_keys[0]: \${PROXY_KEY} is not set`);
  expect(r.stdout).toContain(`${join(dir, 'config.yaml')}: proxy.providers.gpu.api_key: \${UPSTREAM_KEY} is not set`);
  expect(r.stdout).toMatch(/fix: set PROXY_KEY in the daemon's environment .*then restart the daemon/);
});
