// One interactive ssh child: run in a pseudo-terminal (ssh reads passwords and
// one-time codes from its controlling terminal, never from a pipe), with its debug
// lines written to a file of their own (`-E`, see ssh-args.ts) and followed by a
// FileTail. The terminal's output goes only to an attached person, never to a log.
import { openSync, closeSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import { createRequire } from 'node:module';
import { FileTail } from './log-tail.js';
import type { ChildExit, SshChild } from './ssh-process.js';

/** The person's side of an interactive ssh: its screen and its keyboard. */
export interface LoginTerminal {
  /** Output since the last input (the prompt now shown), for a terminal that attaches late. */
  screen(): string;
  /** Subscribes to the output; returns the unsubscribe function. */
  onData(listener: (text: string) => void): () => void;
  write(data: string): void;
  resize(cols: number, rows: number): void;
}

/** An ssh child that also has a terminal. */
export interface PtyChild extends SshChild {
  readonly terminal: LoginTerminal;
}

/** Spawns `file args` in a pseudo-terminal; its debug lines are read from the file after `-E` in `args`. */
export type SpawnPty = (file: string, args: readonly string[], onLine: (line: string) => void) => PtyChild;

// Enough for a banner and a prompt; anything older was already seen or is gone.
const SCREEN_BYTES = 8 * 1024;
// node-pty is an optional dependency: it has no Linux prebuild, and `npm ci` without a
// compiler skips it rather than failing. It is loaded on the first interactive start,
// so the daemon runs without it and only an interactive tunnel says what is missing.
const NO_PTY =
  'interactive tunnels need node-pty, which is not installed or could not be loaded: ' +
  'install make, g++ and python3, then run npm ci again';
/**
 * The part of node-pty used here, written out so that the code builds and type-checks
 * where the optional package could not be installed.
 */
interface IPty {
  readonly pid: number;
  onData(listener: (data: string) => void): unknown;
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): unknown;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  kill(signal?: string): void;
}
interface NodePty {
  spawn(file: string, args: string[], options: { name: string; cols: number; rows: number; cwd: string; env: NodeJS.ProcessEnv }): IPty;
}

/** node-pty from `load` (a require), or the error that says what to install. */
export function loadPty(load: (id: string) => unknown): NodePty | Error {
  try {
    return load('node-pty') as NodePty;
  } catch (e) {
    return new Error(`${NO_PTY} (${e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e)})`);
  }
}
let loaded: NodePty | Error | null = null;
const nodePty = (): NodePty | Error => (loaded ??= loadPty(createRequire(import.meta.url)));

const signalName = (n: number): string => Object.entries(constants.signals).find(([, v]) => v === n)?.[0] ?? `signal ${n}`;

export const ptySpawn: SpawnPty = (file, args, onLine) => {
  const debugLog = args[args.indexOf('-E') + 1];
  // Without -E ssh's debug lines would go to the terminal, mixed with the person's prompts.
  if (!args.includes('-E') || debugLog === undefined) throw new Error('an interactive ssh needs -E <file> for its debug lines');
  // A fresh file per spawn, readable by us alone: ssh appends to it.
  rmSync(debugLog, { force: true });
  closeSync(openSync(debugLog, 'w', 0o600));
  const tail = new FileTail(debugLog, onLine);

  let proc: IPty;
  try {
    const pty = nodePty();
    if (pty instanceof Error) throw pty;
    proc = pty.spawn(file, [...args], {
      name: 'xterm-256color',
      cols: 80,
      rows: 24,
      cwd: process.cwd(),
      env: { ...process.env, TERM: 'xterm-256color' },
    });
  } catch (e) {
    tail.close();
    rmSync(debugLog, { force: true });
    const spawnError = e instanceof Error ? e.message : String(e);
    return {
      pid: null,
      exited: Promise.resolve({ code: null, signal: null, spawnError }),
      kill: () => undefined,
      terminal: deadTerminal(),
    };
  }

  let screen = '';
  const listeners = new Set<(text: string) => void>();
  proc.onData((text) => {
    screen = (screen + text).slice(-SCREEN_BYTES);
    for (const l of listeners) l(text);
  });
  let gone = false;
  const exited = new Promise<ChildExit>((resolve) => {
    proc.onExit(({ exitCode, signal }) => {
      gone = true;
      tail.close();
      rmSync(debugLog, { force: true });
      const sig = signal !== undefined && signal !== 0 ? signalName(signal) : null;
      resolve({ code: sig === null ? exitCode : null, signal: sig, spawnError: null });
    });
  });

  return {
    pid: proc.pid,
    exited,
    kill: (signal) => {
      if (!gone) proc.kill(signal);
    },
    terminal: {
      screen: () => screen,
      onData(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      write(data) {
        if (gone) return;
        // What came before the answer is not replayed to a later terminal: it may echo typed text.
        screen = '';
        proc.write(data);
      },
      resize(cols, rows) {
        if (!gone) proc.resize(cols, rows);
      },
    },
  };
};

function deadTerminal(): LoginTerminal {
  return { screen: () => '', onData: () => () => undefined, write: () => undefined, resize: () => undefined };
}
