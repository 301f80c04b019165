/** tightenModes: group/other bits removed (folders 0700, files 0600), stricter modes kept, links and FIFOs untouched. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { tightenModes } from './file-modes.js';

test('loose folders and files are tightened and reported; the rest is left as it is', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'modes-'));
  try {
    const p = (n: string) => path.join(root, n);
    fs.mkdirSync(p('sub'));
    fs.writeFileSync(p('sub/open.txt'), 'x');
    fs.writeFileSync(p('owner-only.txt'), 'x');
    fs.writeFileSync(p('target.txt'), 'x');
    execFileSync('mkfifo', [p('pipe')]);
    fs.symlinkSync(p('target.txt'), p('link'));
    fs.chmodSync(root, 0o755);
    fs.chmodSync(p('sub'), 0o775);
    fs.chmodSync(p('sub/open.txt'), 0o666);
    fs.chmodSync(p('owner-only.txt'), 0o400);
    fs.chmodSync(p('target.txt'), 0o600);
    fs.chmodSync(p('pipe'), 0o644);
    const r = tightenModes(root);
    const mode = (n: string) => (fs.lstatSync(p(n)).mode & 0o777).toString(8);
    assert.deepEqual(r.changed.map((c) => [path.relative(root, c.path), c.from, c.to]).sort(), [
      ['', '755', '700'],
      ['sub', '775', '700'],
      ['sub/open.txt', '666', '600'],
    ]);
    assert.deepEqual(r.failed, []);
    assert.deepEqual([mode('owner-only.txt'), mode('pipe'), mode('target.txt')], ['400', '644', '600']);
    assert.deepEqual(tightenModes(root).changed, [], 'a second walk changes nothing');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
