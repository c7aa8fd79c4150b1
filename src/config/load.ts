import { open, stat } from 'node:fs/promises';
import { parseConfigText, type ParseOptions } from './parse.js';
import type { ConfigProblem, LoadResult } from './types.js';
import { MAX_CONFIG_BYTES, SIZE_LIMIT } from './yaml-loader.js';

export { formatProblem, parseConfigText, type ParseOptions } from './parse.js';

const fileProblem = (expected: string, found: string): LoadResult => ({
  kind: 'invalid',
  problems: [{ line: 0, column: 0, field: '(file)', expected, found }],
});

/**
 * Reads and validates the config file. A file that does not exist is `missing`, not
 * an error (the daemon runs without tunnels, or keeps the last good config). The
 * size is checked before reading, so a huge file is never read into memory, and a
 * FIFO or device is never opened (opening a FIFO would block the daemon).
 */
export async function loadConfigFile(path: string, opts: ParseOptions = {}): Promise<LoadResult> {
  let bytes: Buffer;
  try {
    const info = await stat(path);
    if (info.isDirectory()) return fileProblem('a file', 'a directory');
    if (!info.isFile()) return fileProblem('a regular file', 'a special file (FIFO, socket or device)');
    if (info.size > MAX_CONFIG_BYTES) return fileProblem(`a file of at most ${SIZE_LIMIT}`, `${info.size} bytes`);
    const handle = await open(path, 'r');
    try {
      // One byte over the limit is enough to tell that the file grew past it since stat().
      const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) break;
      }
      if (length > MAX_CONFIG_BYTES) return fileProblem(`a file of at most ${SIZE_LIMIT}`, 'a larger file');
      bytes = buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return fileProblem('a readable file', code ? `${code} (${(e as Error).message})` : String(e));
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fileProblem('UTF-8 text', 'bytes that are not UTF-8');
  }
  return parseConfigText(text, opts);
}

export type { ConfigProblem, LoadResult };
