import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadPty } from '../../src/supervisor/pty-process.js';

describe('node-pty as an optional dependency', () => {
  it('loads when installed', () => {
    const pty = loadPty(createRequire(import.meta.url));
    expect(pty).not.toBeInstanceOf(Error);
    expect(typeof (pty as { spawn?: unknown }).spawn).toBe('function');
  });

  it('says what to install when it cannot be loaded, instead of stopping the daemon', () => {
    const missing = loadPty(() => {
      throw new Error("Cannot find module 'node-pty'\nRequire stack: …");
    });
    expect(missing).toBeInstanceOf(Error);
    expect((missing as Error).message).toBe(
      "interactive tunnels need node-pty, which is not installed or could not be loaded: install make, g++ and python3, then run npm ci again (Cannot find module 'node-pty')",
    );
  });
});
