#!/usr/bin/env node
/**
 * `npm test`: every *.test.ts under src/ and test/ through node's own test runner (Node 20's --test takes no globs,
 * so the files are listed here). Extra arguments narrow the run: `npm test -- src/core` runs the tests under src/core.
 * Tests within a file run in order; files run two at a time (2 cores); a file's process exits when its tests have ended
 * (--test-force-exit), whatever handles a failed set-up left open.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const passArgs = process.argv.slice(2).filter((a) => a.startsWith('-'));

/**
 * @param {string} dir
 * @param {string[]} out
 * @returns {string[]}
 */
function walk(dir, out) {
  if (!fs.existsSync(dir)) return out;
  const st = fs.statSync(dir);
  if (st.isFile()) {
    if (dir.endsWith('.test.ts')) out.push(dir);
    return out;
  }
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    walk(path.join(dir, e.name), out);
  }
  return out;
}

const files = (roots.length ? roots : ['src', 'test']).flatMap((r) => walk(r, [])).sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const args = [
  '--import',
  'tsx',
  '--test',
  `--test-concurrency=${concurrency}`,
  '--test-timeout=600000',
  // A file whose before-hook failed half-way (one of two services started) must not hang until the timeout on the
  // handles nobody stopped: once its tests have ended the file's process exits (the clean-clone CI lost 10 min so).
  '--test-force-exit',
  ...passArgs,
  ...files,
];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
child.on('exit', (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
