import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPty } from '../../../src/supervisor/process/pty-process.js';

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

  // npm leaves out an optional package it cannot compile without a word: the install says it.
  it("npm's install step says so when node-pty is missing, and is silent when it loads", () => {
    const run = (cwd: string) => execFileSync('sh', ['-c', 'npm run --silent postinstall 2>&1'], { cwd, encoding: 'utf8' });
    const bare = mkdtempSync(join(tmpdir(), 'tm-postinstall-'));
    try {
      copyFileSync(join(import.meta.dirname, '../../../package.json'), join(bare, 'package.json'));
      const text = run(bare);
      expect(text).toContain('tunnel-manager: node-pty did not install');
      expect(text).toContain('npm_config_nodedir=/usr npm ci');
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
    expect(run(join(import.meta.dirname, '../../..'))).toBe('');
  });
});
