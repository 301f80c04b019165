/**
 * The instance labels read from the environment (env.ts): PROBE, LOCATION and INSTANCE — defaults, the value given, and
 * a clear VALIDATION error for a label no result or member row may carry.
 */
import os from 'node:os';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readConfig } from './env.js';
import { AppError } from '../errors.js';

describe('instance labels from the environment', () => {
  it('defaults: probe "default", no location, the host name as the instance', () => {
    const c = readConfig('monitor', { DATA_DIR: '/tmp/x' });
    assert.deepEqual([c.probe, c.location, c.instance], ['default', '', os.hostname()]);
  });

  it('INSTANCE names this instance (two instances on one host can tell their results apart)', () => {
    const c = readConfig('monitor', { DATA_DIR: '/tmp/x', PROBE: 'eu-1', LOCATION: 'Frankfurt', INSTANCE: ' eu-1-a ' });
    assert.deepEqual([c.probe, c.location, c.instance], ['eu-1', 'Frankfurt', 'eu-1-a']);
  });

  for (const bad of ['*', 'a\u0000b', 'x'.repeat(101)]) {
    it(`INSTANCE ${JSON.stringify(bad.slice(0, 8))}… is refused with a VALIDATION error`, () => {
      assert.throws(
        () => readConfig('monitor', { DATA_DIR: '/tmp/x', INSTANCE: bad }),
        (e: unknown) => e instanceof AppError && e.code === 'VALIDATION' && /INSTANCE/.test(e.message),
      );
    });
  }
});
