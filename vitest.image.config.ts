import { defineConfig } from 'vitest/config';

// The image's tests (tests/image/), run by scripts/test-image against the image it has
// just built: one file at a time, since they share the engine and a real sshd each.
export default defineConfig({
  test: {
    include: ['tests/image/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
