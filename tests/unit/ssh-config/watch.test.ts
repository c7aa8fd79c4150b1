// The ssh config watcher on a real folder: an edit of a file ssh read counts, and so
// does a new regular file in an Include's folder (its glob may match it); a socket
// there (ssh's own ControlMaster sockets often live in ~/.ssh) does not.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchSshConfig, type SshConfigWatcher } from '../../../src/ssh-config/watch.js';

let dir = '';
let w: SshConfigWatcher | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
  rmSync(dir, { recursive: true, force: true });
});

function watching(files: string[], folders: string[]) {
  const seen: string[] = [];
  const waiters: { path: string; resolve: () => void }[] = [];
  w = watchSshConfig(
    (paths) => {
      seen.push(...paths);
      for (const x of waiters.splice(0)) {
        if (seen.includes(x.path)) x.resolve();
        else waiters.push(x);
      }
    },
    (e) => {
      throw e;
    },
    0,
  );
  w.watch(files, folders);
  const changed = (path: string) => new Promise<void>((resolve) => (seen.includes(path) ? resolve() : waiters.push({ path, resolve })));
  return { seen, changed };
}

/** chokidar reports nothing until it has read the folder: an edit seen proves it is ready (written again until seen). */
async function ready(changed: (path: string) => Promise<void>, file: string): Promise<void> {
  let seen = false;
  void changed(file).then(() => (seen = true));
  for (let i = 0; i < 100 && !seen; i++) {
    writeFileSync(file, `Host a\n  Port ${2201 + i}\n`);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(seen).toBe(true);
}

describe('the ssh config watcher', () => {
  it('a new regular file in an Include folder counts; a socket there does not; an edit of a read file does', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tm-sshw-'));
    const read = join(dir, 'a.conf');
    writeFileSync(read, 'Host a\n  Port 2200\n');
    const { seen, changed } = watching([read], [dir]);
    await ready(changed, read);
    const socketPath = join(dir, 'cm-user@host:22');
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(socketPath, r));
    const added = join(dir, 'b.conf');
    const arrival = changed(added);
    writeFileSync(added, 'Host b\n  Port 2300\n');
    await arrival;
    // Room for the socket's event, had it counted (it came before the file's).
    await new Promise((r) => setTimeout(r, 300));
    await new Promise<void>((r) => server.close(() => r()));
    expect(seen).toContain(added);
    expect(seen).not.toContain(socketPath);
  });
});
