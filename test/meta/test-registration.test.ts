/**
 * Every test a file declares is registered before the file's first test can end. `npm test` runs node's runner with
 * --test-force-exit (scripts/run-tests.mjs): a file's process exits once the tests registered so far have ended. A
 * test registered after a top-level `await` (say `await createTestDatabase(...)`) that follows an earlier test is
 * then lost whenever the earlier test ends first: no pass, no fail, no skip. That happened to the PostgreSQL tests of
 * shard-index.test.ts in every run and of history-origins.test.ts in some, until this check. The rule: in a
 * test file, no top-level `await` after the first top-level test, describe or it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tsFiles } from '../support/source-files.kit.js';

/** Line numbers (1-based) of top-level awaits that come after the file's first top-level test registration. */
function lateTopLevelAwaits(source: string): number[] {
  const late: number[] = [];
  let registered = false;
  let inTemplate = false;
  source.split('\n').forEach((line, i) => {
    // A line inside a template literal (a script a test writes) is text, not code.
    const wasInTemplate = inTemplate;
    if ((line.replace(/\\`/g, '').match(/`/g)?.length ?? 0) % 2 === 1) inTemplate = !inTemplate;
    if (wasInTemplate) return;
    // Top level: the statement starts in column 0 (prettier indents everything nested).
    if (/^(test|describe|it|suite)(\.(only|skip|todo))?\(/.test(line)) registered = true;
    else if (registered && /^(?:(?:const|let|var)\s[^=]*=\s*)?await\s/.test(line)) late.push(i + 1);
    else if (registered && /^for await\s*\(/.test(line)) late.push(i + 1);
  });
  return late;
}

test('the check finds a top-level await after a registered test, and only then', () => {
  const late = ["test('a', () => {});", "const db = await createTestDatabase('x');", "test('b', () => {});"];
  assert.deepEqual(lateTopLevelAwaits(late.join('\n')), [2]);
  const early = ["const db = await createTestDatabase('x');", "test('a', async () => {", '  await x();', '});'];
  assert.deepEqual(lateTopLevelAwaits(early.join('\n')), [], 'an await before the first test, or inside one, is fine');
  assert.deepEqual(lateTopLevelAwaits("describe('a', () => {});\nawait import('./x.js');"), [2]);
  const script = ["test('a', () => {", '  const js = `', 'const h = await start();', '`;', '});'];
  assert.deepEqual(lateTopLevelAwaits(script.join('\n')), [], 'a line of a template literal is not code');
});

test('no test file has a top-level await after its first test (a test registered after it may never run)', () => {
  const files = [...tsFiles(path.resolve('src')), ...tsFiles(path.resolve('test'))].filter((f) =>
    f.endsWith('.test.ts'),
  );
  assert.ok(files.length > 100, `found ${files.length} test files`);
  const offenders = files.flatMap((f) =>
    lateTopLevelAwaits(fs.readFileSync(f, 'utf8')).map((line) => `${path.relative(process.cwd(), f)}:${line}`),
  );
  assert.deepEqual(offenders, []);
});
