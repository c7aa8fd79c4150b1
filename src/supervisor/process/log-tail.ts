// Follows a file another process appends to, line by line. An interactive ssh runs in
// a pseudo-terminal whose output is the person's screen (prompts, and whatever the
// terminal echoes); its debug lines go to a file of their own (`-E`), read here, so
// that the log parser sees ssh's messages and never what a person typed.
import { closeSync, openSync, readSync } from 'node:fs';

// How often the file is read while ssh runs: the forward's "established" line is
// seen within this delay, well inside the 1 s the supervisor aims for.
const POLL_MS = 100;
const CHUNK = 64 * 1024;
// A line longer than this is cut: a debug line never is, and a runaway file must not grow memory.
const MAX_LINE = 16 * 1024;

export class FileTail {
  private readonly fd: number;
  private position = 0;
  private partial = '';
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly buf = Buffer.alloc(CHUNK);

  /** Opens `path` (which must exist) from its start and reads new lines every 100 ms. */
  constructor(path: string, private readonly onLine: (line: string) => void) {
    this.fd = openSync(path, 'r');
    this.timer = setInterval(() => this.read(), POLL_MS);
    this.timer.unref();
  }

  /** Reads what is left, hands on a last unterminated line, and closes the file; idempotent. */
  close(): void {
    if (this.closed) return;
    this.read();
    this.closed = true;
    clearInterval(this.timer);
    closeSync(this.fd);
    if (this.partial !== '') this.emit(this.partial);
    this.partial = '';
  }

  private read(): void {
    if (this.closed) return;
    for (;;) {
      let n: number;
      try {
        n = readSync(this.fd, this.buf, 0, CHUNK, this.position);
      } catch {
        return;
      }
      if (n <= 0) return;
      this.position += n;
      const text = this.partial + this.buf.toString('utf8', 0, n);
      const lines = text.split('\n');
      this.partial = (lines.pop() ?? '').slice(-MAX_LINE);
      for (const l of lines) this.emit(l);
      if (n < CHUNK) return;
    }
  }

  private emit(line: string): void {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (l !== '') this.onLine(l.slice(0, MAX_LINE));
  }
}
