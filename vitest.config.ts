import { defineConfig } from 'vitest/config';

// Integration and end-to-end tests start real sshd and ssh processes; two cores
// are shared by them, so files run two at a time with generous timeouts.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // The image's tests need the image: scripts/test-image builds it and runs them.
    exclude: ['tests/image/**', '**/node_modules/**'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
