/**
 * Import boundaries: src/core imports neither service; the services never import each other. Test-support files are
 * named `<what>.<role>.ts` (docs/decisions.md 144) and production code imports none of them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tsFiles as files } from '../support/source-files.kit.js';

/** Relative imports resolved to absolute paths; with `bare`, the package and node: specifiers too, as written. */
function imports(file: string, bare = false): string[] {
  const src = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const spec = m[1] ?? m[2]!;
    if (spec.startsWith('.')) out.push(path.resolve(path.dirname(file), spec));
    else if (bare) out.push(spec);
  }
  return out;
}

const SRC = path.resolve('src');
const rules: Array<[string, string[]]> = [
  ['core', ['monitor', 'agent', 'cli']],
  // the CLI knows the services only through their HTTP API and served OpenAPI
  ['cli', ['monitor', 'agent']],
  ['monitor', ['agent', 'cli']],
  ['agent', ['monitor', 'cli']],
];

for (const [area, forbidden] of rules) {
  test(`src/${area} imports nothing from ${forbidden.map((f) => `src/${f}`).join(' or ')}`, () => {
    const bad: string[] = [];
    for (const f of files(path.join(SRC, area))) {
      for (const target of imports(f)) {
        for (const other of forbidden) {
          if (target.startsWith(path.join(SRC, other) + path.sep))
            bad.push(`${path.relative('.', f)} → ${path.relative('.', target)}`);
        }
      }
    }
    assert.deepEqual(bad, []);
  });
}

test('the boundary check itself sees imports (a file that imports across would be caught)', () => {
  const f = path.join(SRC, 'monitor', 'service.ts');
  assert.ok(
    imports(f).some((t) => t.startsWith(path.join(SRC, 'core'))),
    'monitor/service.ts imports core',
  );
});

/** What a test-support file does, as the last part of its name before `.ts` (README "Tests and benchmarks"). */
const ROLES = ['harness', 'fixture', 'fake', 'kit', 'contract'];
const SUPPORT = new RegExp(`\\.(${ROLES.join('|')})\\.(ts|js)$`);
const TEST = /\.test\.(ts|js)$/;
const TEST_DIR = path.resolve('test') + path.sep;

test('every module under test/ is a test or a support file named <what>.<role>.ts', () => {
  const bad = files(path.resolve('test')).filter((f) => !TEST.test(f) && !SUPPORT.test(f));
  assert.deepEqual(
    bad.map((f) => path.relative('.', f)),
    [],
    `name them <what>.{${ROLES.join(',')}}.ts`,
  );
});

test('production code imports no test-support file; a src file that uses node:test or test/ is named as one', () => {
  const bad: string[] = [];
  for (const f of files(SRC).filter((x) => !TEST.test(x) && !SUPPORT.test(x))) {
    for (const target of imports(f, true)) {
      if (SUPPORT.test(target) || target.startsWith(TEST_DIR) || /^node:(test|assert)/.test(target))
        bad.push(`${path.relative('.', f)} → ${path.isAbsolute(target) ? path.relative('.', target) : target}`);
    }
  }
  assert.deepEqual(bad, []);
});

test('the build leaves out every support role (tsconfig.build.json)', () => {
  const exclude = JSON.parse(fs.readFileSync('tsconfig.build.json', 'utf8')).exclude as string[];
  for (const role of ['test', ...ROLES]) assert.ok(exclude.includes(`src/**/*.${role}.ts`), `src/**/*.${role}.ts`);
});
