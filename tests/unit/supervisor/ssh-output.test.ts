// Reading ssh's stderr: the line that says a forward is established, and which lines the log keeps.
import { describe, expect, it } from 'vitest';
import { isEstablishedLine, keepInLog } from '../../../src/supervisor/process/ssh-output.js';

describe('ssh output', () => {
  it('-L is established at the client loop (the bind lines come before the bind is tried)', () => {
    expect(isEstablishedLine('debug1: Local connections to 127.0.0.1:22088 forwarded to remote address localhost:22', '-L')).toBe(false);
    expect(isEstablishedLine('debug1: Local forwarding listening on 127.0.0.1 port 22088.', '-L')).toBe(false);
    expect(isEstablishedLine('debug1: Entering interactive session.', '-L')).toBe(true);
  });

  it('-R is established on the server\'s success answer', () => {
    expect(isEstablishedLine('debug1: Entering interactive session.', '-R')).toBe(false);
    expect(isEstablishedLine('debug1: remote forward success for: listen 22088, connect localhost:22', '-R')).toBe(true);
    expect(isEstablishedLine('debug1: remote forward failure for: listen 10.9.9.9:22088, connect localhost:22', '-R')).toBe(false);
  });

  it('keeps messages and milestones, drops debug noise', () => {
    expect(keepInLog('Host key verification failed.')).toBe(true);
    expect(keepInLog('debug1: Connecting to 127.0.0.1 [127.0.0.1] port 13955.')).toBe(true);
    expect(keepInLog('debug1: kex: algorithm: sntrup761x25519-sha512')).toBe(false);
    expect(keepInLog('   ')).toBe(false);
  });
});
