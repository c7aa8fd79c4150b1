// Virtual time and a scripted ssh for the supervisor's unit tests.
import type { Clock } from '../../../src/supervisor/clock.js';
import type { LoginTerminal, PtyChild, SpawnPty } from '../../../src/supervisor/process/pty-process.js';
import type { ChildExit, SpawnSsh } from '../../../src/supervisor/process/ssh-process.js';

/** Let pending promise callbacks run. */
export const flush = () => new Promise<void>((r) => setImmediate(r));

interface Timer {
  at: number;
  resolve(elapsed: boolean): void;
}

/** A clock that only moves when told to; timers fire in order as it passes them. */
export class ManualClock implements Clock {
  t = Date.UTC(2030, 0, 1);
  rand = 0.5;
  private timers: Timer[] = [];

  now(): number {
    return this.t;
  }

  random(): number {
    return this.rand;
  }

  sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer: Timer = {
        at: this.t + Math.max(0, ms),
        resolve: (elapsed) => {
          this.timers = this.timers.filter((x) => x !== timer);
          signal.removeEventListener('abort', onAbort);
          resolve(elapsed);
        },
      };
      const onAbort = () => timer.resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  /** Moves time forward by `ms`, firing every timer on the way (and what they schedule). */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await flush();
    for (;;) {
      const due = this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.t = Math.max(this.t, due.at);
      due.resolve(true);
      await flush();
    }
    this.t = target;
    await flush();
  }

  pending(): number {
    return this.timers.length;
  }
}

/** A login terminal that records what was typed and lets a test show output. */
export class FakeTerminal implements LoginTerminal {
  readonly typed: string[] = [];
  readonly sizes: { cols: number; rows: number }[] = [];
  private shown = '';
  private readonly listeners = new Set<(text: string) => void>();

  show(text: string): void {
    this.shown += text;
    for (const l of this.listeners) l(text);
  }

  screen(): string {
    return this.shown;
  }

  onData(listener: (text: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  write(data: string): void {
    this.shown = '';
    this.typed.push(data);
  }

  resize(cols: number, rows: number): void {
    this.sizes.push({ cols, rows });
  }
}

export class FakeChild implements PtyChild {
  readonly signals: string[] = [];
  /** Used only when the child was spawned as an interactive one. */
  readonly terminal = new FakeTerminal();
  readonly exited: Promise<ChildExit>;
  private finish!: (e: ChildExit) => void;
  private done = false;

  constructor(
    readonly pid: number | null,
    readonly args: readonly string[],
    readonly at: number,
    private readonly onLine: (line: string) => void,
    /** Exit with code 0 on SIGTERM, as ssh -N does; false to make it ignore TERM. */
    public honoursTerm = true,
  ) {
    this.exited = new Promise((r) => (this.finish = r));
  }

  say(...lines: string[]): void {
    for (const l of lines) this.onLine(l);
  }

  exit(code: number | null, signal: string | null = null, spawnError: string | null = null): void {
    if (this.done) return;
    this.done = true;
    this.finish({ code, signal, spawnError });
  }

  get gone(): boolean {
    return this.done;
  }

  kill(signal: NodeJS.Signals): void {
    this.signals.push(signal);
    if (signal === 'SIGKILL') this.exit(null, 'SIGKILL');
    else if (signal === 'SIGTERM' && this.honoursTerm) this.exit(0);
  }
}

/** A spawn that records every child it makes. */
export function fakeSpawn(clock: ManualClock): { spawn: SpawnSsh & SpawnPty; children: FakeChild[] } {
  const children: FakeChild[] = [];
  let nextPid = 1000;
  const spawn: SpawnSsh & SpawnPty = (_file, args, onLine) => {
    const child = new FakeChild(nextPid++, args, clock.now(), onLine);
    children.push(child);
    return child;
  };
  return { spawn, children };
}

export const ESTABLISHED_L = 'debug1: Entering interactive session.';
export const ESTABLISHED_R = 'debug1: remote forward success for: listen 22088, connect localhost:22';
