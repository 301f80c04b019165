/**
 * The measurement patches in bench/experiments/ still apply to the code they measure (`git apply --check`): a figure
 * in docs/benchmarks.md that cites one stays reproducible, and a change to the patched files that breaks one fails
 * here, not in the next session that tries to rerun it. Needs a git work tree (skipped in an unpacked archive).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve('.');
const DIR = path.join(ROOT, 'bench', 'experiments');
const patches = fs.readdirSync(DIR).filter((f) => f.endsWith('.patch'));
const inWorkTree = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: ROOT }).stdout?.toString().trim();

test('bench/experiments holds at least one patch, each with a description before its diff', () => {
  assert.ok(patches.length > 0);
  for (const f of patches) {
    const text = fs.readFileSync(path.join(DIR, f), 'utf8');
    const diffAt = text.indexOf('diff --git ');
    assert.ok(diffAt > 0, `${f}: no description before the diff`);
    assert.match(text.slice(0, diffAt), /docs\//, `${f}: the description names the docs that cite it`);
  }
});

// An unpacked archive has no work tree to apply to (a clone, as CI's, always has one).
const skip = inWorkTree === 'true' ? false : 'not a git work tree';
for (const f of patches) {
  test(`${f} applies to this checkout`, { skip }, () => {
    // Throws with git's message when a hunk no longer applies.
    execFileSync('git', ['apply', '--check', path.join('bench', 'experiments', f)], { cwd: ROOT, stdio: 'pipe' });
  });
}
