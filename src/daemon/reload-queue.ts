import { unreachable } from '../kernel/unreachable.js';

/**
 * One reload at a time, and a request that arrives while one runs folded into a
 * single follow-up, so the file's latest state is applied exactly once more:
 *
 *   idle ──request──▶ running ──request──▶ running+queued ──request──▶ (same, joins)
 *     ▲                 │                        │
 *     └────finished─────┘◀──────finished─────────┘ (starts the queued run)
 *
 * Every promise made here is returned to a caller or settled into one that is: no
 * rejection can go unhandled inside the queue.
 */
export type QueueState<T> =
  | { id: 'idle' }
  | { id: 'running' }
  | { id: 'queued'; waiters: Deferred<T> };

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export interface ReloadQueue<T> {
  /** Runs `task` now, or once after the run in progress; callers that ask meanwhile share that run. */
  request(): Promise<T>;
  state(): QueueState<T>['id'];
}

export function createReloadQueue<T>(task: () => Promise<T>): ReloadQueue<T> {
  let state: QueueState<T> = { id: 'idle' };

  function run(): Promise<T> {
    state = { id: 'running' };
    // A task that throws synchronously is a rejected run like any other.
    const done = Promise.resolve().then(task);
    const finished = () => {
      if (state.id === 'queued') {
        const { waiters } = state;
        run().then(waiters.resolve, waiters.reject);
      } else {
        state = { id: 'idle' };
      }
    };
    done.then(finished, finished);
    return done;
  }

  return {
    request() {
      switch (state.id) {
        case 'idle':
          return run();
        case 'running': {
          const waiters = deferred<T>();
          state = { id: 'queued', waiters };
          return waiters.promise;
        }
        case 'queued':
          return state.waiters.promise;
        default:
          return unreachable(state);
      }
    },
    state: () => state.id,
  };
}
