// A state dir that is ours (SPEC §6, issue 22): the supervisor refuses one that another
// account owns or can write, files included, with the fix; at start it signals a
// leftover from the children file only when that process is ours and runs the
// configured ssh. Runs as root, so "another account" is uid 65534 (nobody), through
// chown and setpriv.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor } from '../../src/supervisor/index.js';
import { checkStateDirOwner } from '../../src/settings/state-dir-owner.js';
import { lockStateDir } from '../../src/supervisor/state/state-lock.js';
import { tempDir } from './supervisor-fixture.js';

const NOBODY = 65534;
const uid = process.getuid!();
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) {
    try {
      c.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((s) => s !== '');
const alive = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
};

/** Starts a process and waits until its command line is the one asked for (after exec). */
async function started(command: string, args: string[], expected: string[]): Promise<ChildProcess> {
  const c = spawn(command, args, { stdio: 'ignore' });
  children.push(c);
  for (let i = 0; i < 200; i++) {
    try {
      if (JSON.stringify(cmdline(c.pid!)) === JSON.stringify(expected)) return c;
    } catch {
      // Not there yet.
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${command} never ran ${JSON.stringify(expected)}`);
}

describe('a state dir that is not ours is refused with the fix', () => {
  const refusal = async (stateDir: string) => (await createSupervisor({ sshBin: 'ssh', sshConfigPath: null, stateDir, mode: 'default' }).then(() => null, (e: Error) => e.message));

  it('owned by another account', async () => {
    const dir = tempDir('tm-owner-');
    chownSync(dir, NOBODY, NOBODY);
    const message = await refusal(dir);
    expect(message).toContain(`${dir} belongs to uid ${NOBODY}, not to uid ${uid}`);
    expect(message).toContain(`chown -R ${uid} ${dir} && chmod -R go-w ${dir} && chmod 700 ${dir}`);
    expect(message).toContain('--state-dir');
  });

  it('writable by its group or by others', async () => {
    for (const mode of [0o770, 0o707, 0o777]) {
      const dir = tempDir('tm-mode-');
      chmodSync(dir, mode);
      expect(await refusal(dir)).toContain(`${dir} is writable by`);
    }
  });

  it('a file in it (the children file, known_hosts) or in its logins folder owned by another account or writable by others', async () => {
    for (const [file, change] of [
      ['children.json', (p: string) => chownSync(p, NOBODY, NOBODY)],
      ['known_hosts', (p: string) => chmodSync(p, 0o666)],
      ['logins/x.log', (p: string) => chmodSync(p, 0o620)],
    ] as const) {
      const dir = tempDir('tm-file-');
      mkdirSync(join(dir, 'logins'), { mode: 0o700 });
      writeFileSync(join(dir, file), '', { mode: 0o600 });
      change(join(dir, file));
      expect(await refusal(dir)).toContain(join(dir, file));
    }
  });

  it('a missing dir, or one of ours with private files, is taken', () => {
    expect(checkStateDirOwner(join(tempDir(), 'new'), uid).ok).toBe(true);
    const dir = tempDir();
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'desired.json'), '{}', { mode: 0o644 });
    expect(checkStateDirOwner(dir, uid).ok).toBe(true);
  });
});

describe('leftovers in the children file', () => {
  it('signals only a process of our uid running the configured ssh; another account\'s process or another program is left alone', async () => {
    // Ours and ssh: waits on its ProxyCommand, so it never connects anywhere.
    const sshArgv = ['ssh', '-F', '/dev/null', '-o', 'ProxyCommand=sleep 300', '-N', 'leftover.invalid'];
    const ssh = await started('ssh', sshArgv.slice(1), sshArgv);
    // Its ProxyCommand outlives it: ended with the test's own processes.
    await expect.poll(() => readFileSync(`/proc/${ssh.pid}/task/${ssh.pid}/children`, 'utf8').trim()).not.toBe('');
    const proxyPid = Number(readFileSync(`/proc/${ssh.pid}/task/${ssh.pid}/children`, 'utf8').trim().split(' ')[0]);
    children.push({ kill: () => process.kill(proxyPid, 'SIGKILL') } as unknown as ChildProcess);
    // The same command line, but another account's (chosen by whoever wrote the file).
    const foreign = await started('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'bash', '-c', 'exec -a ssh sleep 301'], ['ssh', '301']);
    // Ours, named ssh, but another program.
    const impostor = await started('bash', ['-c', 'exec -a ssh sleep 302'], ['ssh', '302']);
    const stateDir = tempDir('tm-leftover-');
    writeFileSync(
      join(stateDir, 'children.json'),
      [{ pid: ssh.pid, argv: sshArgv }, { pid: foreign.pid, argv: ['ssh', '301'] }, { pid: impostor.pid, argv: ['ssh', '302'] }].map((e) => `${JSON.stringify(e)}\n`).join(''),
      { mode: 0o600 },
    );
    const logs: Record<string, unknown>[] = [];
    const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: null, stateDir, mode: 'default', log: (e) => logs.push(e) });
    try {
      expect(alive(ssh.pid!)).toBe(false);
      expect(alive(foreign.pid!)).toBe(true);
      expect(alive(impostor.pid!)).toBe(true);
      expect(logs).toContainEqual(expect.objectContaining({ event: 'leftover_ssh_ended', pids: [ssh.pid] }));
      expect(logs).toContainEqual(expect.objectContaining({ event: 'leftover_not_ours', pids: [foreign.pid, impostor.pid] }));
    } finally {
      await sup.shutdown();
    }
  });
});

describe('one daemon per state dir', () => {
  it('a second supervisor on a held state dir is refused with the holder\'s pid; after shutdown, or from a dead holder, it is taken', async () => {
    const stateDir = tempDir('tm-lock-');
    // A holder that is alive: another process.
    const holder = await started('sleep', ['303'], ['sleep', '303']);
    writeFileSync(join(stateDir, 'daemon.lock'), JSON.stringify({ pid: holder.pid, started: readFileSync(`/proc/${holder.pid}/stat`, 'latin1').split(') ')[1]!.split(' ')[19] }), { mode: 0o600 });
    const refused = await createSupervisor({ sshBin: 'ssh', sshConfigPath: null, stateDir, mode: 'default' }).then(() => '', (e: Error) => e.message);
    expect(refused).toContain(`another tunnel-manager daemon (pid ${holder.pid}: sleep 303) already uses the state dir ${stateDir}`);
    expect(refused).toContain('--state-dir, --socket and --listen');
    // The holder dies (kill -9): its lock is stale.
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: null, stateDir, mode: 'default' });
    expect(lockStateDir(stateDir, 1).ok).toBe(false);
    await sup.shutdown();
    const again = lockStateDir(stateDir, process.pid);
    expect(again.ok).toBe(true);
    if (again.ok) again.value.release();
  });
});
