// What a vitest run did, for scripts/test's closing line: a vitest reporter that writes
// test-artifacts/results.json, and the line itself (`node scripts/lib/test-results.mjs
// STATUS`). Vitest's own counts leave out what failed outside a test (a beforeAll that
// threw, a file that could not be imported) and count the tests that then never ran as
// "skipped"; here each of those is a failure with its reason, and every test that did not
// run is named. A skipped test is never a pass: the run fails when there is one.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

/** Where the results go, relative to the project; TM_TEST_RESULTS moves them (scripts/test-image keeps its own). */
export const RESULTS = process.env.TM_TEST_RESULTS || 'test-artifacts/results.json';

const firstLine = (errors) => {
  const e = errors?.[0];
  if (!e) return 'no reason given';
  return `${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${String(e.message ?? e).split('\n')[0]}`;
};

/** Why a test has no result: the first failure around it (its suite's hook, its file), or how it was marked. */
function whyNotRun(test, result) {
  for (let p = test.parent; p; p = p.parent) {
    const errors = p.errors?.() ?? [];
    // The reason itself is listed once, under "failed outside a test".
    if (errors.length > 0) return p.type === 'module' ? 'its file failed first' : `its suite "${p.fullName}" failed first`;
    if (p.type === 'module') break;
  }
  if (result.state !== 'skipped') return `no result (${result.state})`;
  if (result.note) return `skipped: ${result.note}`;
  return test.options.mode === 'todo' ? 'marked todo' : 'skipped (marked skip, or skipped while running)';
}

/** The reporter: `vitest run --reporter=./scripts/lib/test-results.mjs`. */
export default class TestResults {
  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(modules, unhandledErrors, reason) {
    const out = { reason, passed: 0, failed: [], outside: [], didNotRun: [], unhandled: [], files: [] };
    for (const m of modules) {
      const file = relative(this.root, m.moduleId);
      const tests = [...m.children.allTests()];
      const moduleErrors = m.errors();
      if (moduleErrors.length > 0) out.outside.push({ where: file, why: firstLine(moduleErrors) });
      for (const s of m.children.allSuites()) {
        const errors = s.errors();
        if (errors.length > 0) out.outside.push({ where: `${file} > ${s.fullName}`, why: firstLine(errors) });
      }
      if (m.state() === 'failed' && moduleErrors.length === 0 && tests.length === 0) {
        out.outside.push({ where: file, why: 'the file failed and ran no test' });
      }
      for (const t of tests) {
        const r = t.result();
        if (r.state === 'passed') out.passed++;
        else if (r.state === 'failed') out.failed.push({ where: `${file} > ${t.fullName}`, why: firstLine(r.errors) });
        else out.didNotRun.push({ where: `${file} > ${t.fullName}`, why: whyNotRun(t, r) });
      }
      out.files.push({ file, state: m.state(), ms: Math.round(m.diagnostic().duration), tests: tests.length });
    }
    for (const e of unhandledErrors) out.unhandled.push(firstLine([e]));
    const path = resolve(this.root, RESULTS);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(out, null, 1)}\n`);
  }
}

/** The closing lines for a run whose vitest exited with `status`; returns the exit status to use. */
export function closingLines(status, results) {
  const lines = [];
  if (!results) {
    lines.push(`tests: no results: vitest exited ${status} before the end of the run (see above), so nothing can be counted as passed`);
    return { lines, status: status === 0 ? 1 : status };
  }
  const { passed, failed, outside, didNotRun, unhandled } = results;
  const list = (title, items) => {
    if (items.length === 0) return;
    lines.push(`${title}:`);
    for (const i of items.slice(0, 40)) lines.push(`  ${i.where}: ${i.why}`);
    if (items.length > 40) lines.push(`  … and ${items.length - 40} more`);
  };
  list('failed tests', failed);
  list('failed outside a test (a hook, an import)', outside);
  list('did not run', didNotRun);
  if (unhandled.length > 0) list('errors outside any test', unhandled.map((why) => ({ where: 'unhandled', why })));
  const nFailed = failed.length + outside.length + unhandled.length;
  let code = status;
  if (code === 0 && (nFailed > 0 || didNotRun.length > 0)) code = 1;
  const parts = [`${passed} passed`, `${nFailed} failed`];
  if (outside.length + unhandled.length > 0) parts[1] += ` (${failed.length} in a test, ${outside.length + unhandled.length} outside a test)`;
  if (didNotRun.length > 0) parts.push(`${didNotRun.length} did not run`);
  let line = `tests: ${parts.join(', ')}`;
  if (code !== 0 && nFailed === 0) line += `; the run failed all the same: vitest exited ${status}${didNotRun.length ? ' or a test did not run' : ''} (see above)`;
  lines.push(line);
  return { lines, status: code };
}

// `node scripts/lib/test-results.mjs STATUS`: prints the closing lines and exits with the run's status.
if (import.meta.url === `file://${process.argv[1]}`) {
  const status = Number(process.argv[2] ?? 1);
  let results;
  try {
    results = JSON.parse(readFileSync(RESULTS, 'utf8'));
  } catch {
    results = undefined;
  }
  const r = closingLines(status, results);
  for (const l of r.lines) console.log(l);
  process.exit(r.status);
}
