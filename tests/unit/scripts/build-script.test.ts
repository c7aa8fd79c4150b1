// scripts/build.mjs, which `npm start` and scripts/test run with --if-needed: dist/ is
// rebuilt exactly when what tsc reads differs from what it was built from.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS script
import { sourceHash, staleBecause } from '../../../scripts/build.mjs';

let root: string;
const make = () => {
  root = mkdtempSync(join(tmpdir(), 'tm-build-'));
  mkdirSync(join(root, 'src/sub'), { recursive: true });
  writeFileSync(join(root, 'tsconfig.json'), '{}');
  writeFileSync(join(root, 'package.json'), '{}');
  writeFileSync(join(root, 'src/main.ts'), 'export {};\n');
  writeFileSync(join(root, 'src/sub/a.ts'), 'export const a = 1;\n');
  return root;
};
const built = () => {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'dist/main.js'), '');
  writeFileSync(join(root, 'dist/.source-hash'), `${sourceHash(root)}\n`);
};
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('scripts/build.mjs --if-needed', () => {
  it('builds when dist/ is missing or was built without a record of its sources', () => {
    make();
    expect(staleBecause(root)).toBe('dist/ has not been built yet');
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist/main.js'), '');
    expect(staleBecause(root)).toMatch(/no record of its sources/);
  });

  it('skips the build when nothing changed, and rebuilds after any change tsc would see', () => {
    make();
    built();
    expect(staleBecause(root)).toBeNull();
    for (const change of [
      () => writeFileSync(join(root, 'src/sub/a.ts'), 'export const a = 2;\n'),
      () => writeFileSync(join(root, 'src/sub/new.ts'), ''),
      () => rmSync(join(root, 'src/sub/a.ts')),
      () => writeFileSync(join(root, 'tsconfig.json'), '{"compilerOptions":{}}'),
      () => writeFileSync(join(root, 'package.json'), '{"type":"module"}'),
    ]) {
      built();
      change();
      expect(staleBecause(root)).toBe('src/ changed since the last build');
    }
  });

  it('does not count a renamed file as unchanged', () => {
    make();
    const before = sourceHash(root);
    rmSync(join(root, 'src/sub/a.ts'));
    writeFileSync(join(root, 'src/sub/b.ts'), 'export const a = 1;\n');
    expect(sourceHash(root)).not.toBe(before);
  });
});
