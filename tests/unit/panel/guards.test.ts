import { describe, expect, it } from 'vitest';
import { passwordMatches, Sessions } from '../../../src/panel/auth.js';
import { isLoopbackName, panelHostAllowed as hostAllowed, panelOriginAllowed as originAllowed } from '../../../src/edge/host-origin-rules.js';

describe('Origin check for state-changing requests', () => {
  const host = '127.0.0.1:5000';
  it('lets reads through whatever their Origin', () => {
    expect(originAllowed('GET', { origin: 'https://evil.example', host })).toBe(true);
    expect(originAllowed('HEAD', { host })).toBe(true);
  });

  it('accepts the panel\'s own origin', () => {
    expect(originAllowed('POST', { origin: 'http://127.0.0.1:5000', host })).toBe(true);
    expect(originAllowed('DELETE', { origin: 'http://localhost:5000', host: 'localhost:5000' })).toBe(true);
    expect(originAllowed('PUT', { origin: 'https://panel.example.org', host: 'panel.example.org' })).toBe(true);
  });

  it('refuses a foreign origin, another port, "null" and non-web schemes', () => {
    for (const origin of ['https://evil.example', 'http://127.0.0.1:5001', 'http://localhost:5000', 'null', 'file://', 'chrome-extension://abc']) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'post']) {
        expect(originAllowed(method, { origin, host }), `${method} ${origin}`).toBe(false);
      }
    }
  });

  it('without Origin, needs the panel\'s own header', () => {
    expect(originAllowed('POST', { host })).toBe(false);
    expect(originAllowed('POST', { host, origin: '' })).toBe(false);
    expect(originAllowed('POST', { host, panelHeader: '1' })).toBe(true);
    expect(originAllowed('POST', { host, panelHeader: 'yes' })).toBe(false);
  });

  it('refuses a request with no Host to compare with', () => {
    expect(originAllowed('POST', { origin: 'http://127.0.0.1:5000' })).toBe(false);
  });
});

describe('Host check (DNS rebinding) on a panel without password', () => {
  it('accepts loopback names only', () => {
    for (const h of ['127.0.0.1:5000', 'localhost:5000', 'LOCALHOST', '[::1]:5000', 'panel.localhost:5000', '127.1.2.3']) {
      expect(hostAllowed(h, false), h).toBe(true);
    }
    for (const h of ['evil.example:5000', '10.0.0.2:5000', 'localhost.evil.example', undefined, '', 'a b']) {
      expect(hostAllowed(h, false), String(h)).toBe(false);
    }
  });
  it('with a password any host may be used (the session cookie protects)', () => {
    expect(hostAllowed('panel.example.org', true)).toBe(true);
  });
  it('knows loopback names', () => {
    expect(isLoopbackName('localhost.')).toBe(true);
    expect(isLoopbackName('127.0.0.1')).toBe(true);
    expect(isLoopbackName('128.0.0.1')).toBe(false);
  });
});

describe('password and sessions', () => {
  it('compares passwords exactly, whatever their length', () => {
    expect(passwordMatches('s3cret', 's3cret')).toBe(true);
    expect(passwordMatches('s3cre', 's3cret')).toBe(false);
    expect(passwordMatches('s3cret ', 's3cret')).toBe(false);
    expect(passwordMatches('', 's3cret')).toBe(false);
    expect(passwordMatches('x'.repeat(5000), 's3cret')).toBe(false);
  });

  it('gives random ids that expire when idle and can be revoked', () => {
    let now = 0;
    const s = new Sessions({ ttlMs: 1000, now: () => now });
    const a = s.create();
    const b = s.create();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.touch(a)).toBe(true);
    expect(s.touch('forged')).toBe(false);
    expect(s.touch(undefined)).toBe(false);
    now = 900;
    expect(s.touch(a)).toBe(true); // extended to 1900
    now = 1500;
    expect(s.touch(a)).toBe(true);
    expect(s.touch(b)).toBe(false); // b expired at 1000
    s.revoke(a);
    expect(s.touch(a)).toBe(false);
  });

  it('keeps a bounded number of sessions, dropping the oldest', () => {
    const s = new Sessions({ max: 3 });
    const ids = [s.create(), s.create(), s.create(), s.create()];
    expect(s.touch(ids[0])).toBe(false);
    expect(ids.slice(1).every((id) => s.touch(id))).toBe(true);
  });
});
