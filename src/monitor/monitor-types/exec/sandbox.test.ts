/**
 * The browser launcher wrapper (sandbox.ts launcherFor): written once per process into a private temporary folder,
 * and that folder is gone when the process exits — before, every service start as root left one behind in /tmp.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHILD = `
import { launcherFor } from './src/monitor/monitor-types/exec/sandbox.ts';
const plan = { sandbox: true, runAs: { name: 'nobody', uid: 65534, gid: 65534 } };
const file = launcherFor('/usr/bin/chromium', plan);
if (launcherFor('/usr/bin/chromium', plan) !== file) throw new Error('not reused');
process.stdout.write(file);
`;

test('the launcher wrapper is private to the process and removed when it exits', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const file = r.stdout.trim();
  assert.match(file, /exec-launcher-[^/]+\/browser$/);
  assert.equal(existsSync(file), false, `${file} left behind`);
  assert.equal(existsSync(file.replace(/\/browser$/, '')), false);
});

test('while the process runs, the wrapper is executable by its owner only', () => {
  const child = `${CHILD}\nconst { statSync } = await import('node:fs');\nprocess.stdout.write(' ' + (statSync(file).mode & 0o777).toString(8));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, / 700$/);
});
