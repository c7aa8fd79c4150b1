// Time as the supervisor sees it, passed in so that backoff, spacing and timeouts are
// tested with virtual time. Every wait takes the AbortSignal of what it belongs to.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves true after `ms`, or false as soon as `signal` aborts (never rejects). */
  sleep(ms: number, signal: AbortSignal): Promise<boolean>;
  /** In [0, 1), for jitter. */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep(ms, signal) {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, Math.max(0, ms));
      signal.addEventListener('abort', onAbort, { once: true });
    });
  },
};
