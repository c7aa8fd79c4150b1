// scripts/test's closing line (scripts/lib/test-results.mjs): failures outside a test
// count, tests that did not run are named, and it never says "0 failed" for a failed run.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JS helper of scripts/test
import { closingLines } from '../../../scripts/lib/test-results.mjs';

const empty = { passed: 0, failed: [], outside: [], didNotRun: [], unhandled: [] };
const last = (r: { lines: string[] }) => r.lines[r.lines.length - 1];

describe('the closing line', () => {
  it('counts a failed hook or import as a failure and names the tests that did not run', () => {
    const r = closingLines(1, {
      ...empty,
      passed: 2322,
      outside: [{ where: 'tests/e2e/panel/reference-panel.test.ts > the reference web panel', why: 'cannot get the reference implementation' }],
      didNotRun: Array.from({ length: 7 }, (_, i) => ({ where: `tests/e2e/panel/reference-panel.test.ts > t${i}`, why: 'its suite failed first' })),
    });
    expect(last(r)).toBe('tests: 2322 passed, 1 failed (0 in a test, 1 outside a test), 7 did not run');
    expect(r.lines).toContain('  tests/e2e/panel/reference-panel.test.ts > the reference web panel: cannot get the reference implementation');
    expect(r.lines).toContain('  tests/e2e/panel/reference-panel.test.ts > t6: its suite failed first');
    expect(r.status).toBe(1);
  });

  it('never says 0 failed for a run that exited non-zero', () => {
    const r = closingLines(1, { ...empty, passed: 10 });
    expect(last(r)).toMatch(/^tests: 10 passed, 0 failed; the run failed all the same: vitest exited 1/);
    expect(r.status).toBe(1);
  });

  it('fails a run where a test was skipped, even when vitest exited 0', () => {
    const r = closingLines(0, { ...empty, passed: 3, didNotRun: [{ where: 'a > b', why: 'skipped' }] });
    expect(last(r)).toMatch(/^tests: 3 passed, 0 failed, 1 did not run; the run failed all the same/);
    expect(r.status).toBe(1);
  });

  it('says so when there are no results at all, and fails', () => {
    const r = closingLines(0, undefined);
    expect(last(r)).toMatch(/^tests: no results/);
    expect(r.status).toBe(1);
  });

  it('passes a clean run with a plain line', () => {
    const r = closingLines(0, { ...empty, passed: 5 });
    expect(r.lines).toEqual(['tests: 5 passed, 0 failed']);
    expect(r.status).toBe(0);
  });
});
