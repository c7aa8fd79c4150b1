import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Most test files spend their time waiting: on sshd and ssh, the built daemon and CLI
// starting, Chromium, the timers of the code under test. At two files at a time the
// suite used about a third of two cores (BENCHMARKS.md, "Test suite"), so files run two
// per core. Not more: on a machine already loaded by other work, the extra processes
// stretch the daemon's start past the tests' own deadlines. TM_TEST_WORKERS sets the
// number outright.
const workers = Number(process.env.TM_TEST_WORKERS) || Math.min(8, Math.max(2, availableParallelism() * 2));

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // The image's tests need the image: scripts/test-image builds it and runs them.
    exclude: ['tests/image/**', '**/node_modules/**'],
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
