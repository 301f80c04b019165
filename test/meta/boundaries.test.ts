/**
 * Import boundaries: src/core imports neither service; the services never import each other.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const spec = m[1] ?? m[2]!;
    if (spec.startsWith('.')) out.push(path.resolve(path.dirname(file), spec));
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
