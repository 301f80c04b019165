/**
 * The registry matches the folder: every type file is registered under its own name, every dbname of the spec has a
 * type, and each type's contract is complete.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createMonitorTypes } from './registry.js';
import { DBNAMES } from './types.js';
import { COMMON_FIELDS } from '../monitors/common-fields.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const NOT_TYPES = new Set(['types.ts', 'registry.ts']);

test('every monitor-type file is registered under its own name, and every dbname has a type', async () => {
  const { types, close } = createMonitorTypes({ log: pino({ level: 'silent' }) });
  try {
    const fileIds = fs
      .readdirSync(here)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !NOT_TYPES.has(f))
      .map((f) => f.replace(/\.ts$/, ''));
    assert.deepEqual([...fileIds].sort(), [...DBNAMES].sort());
    assert.deepEqual([...types.keys()].sort(), [...DBNAMES].sort());
    for (const [id, t] of types) {
      assert.equal(t.id, id, `type registered as ${id} says it is ${t.id}`);
      assert.equal(typeof t.check, 'function');
      assert.equal(t.fields.type, 'object');
      for (const f of [...t.required, ...t.secretFields])
        assert.ok(f in t.fields.properties, `${id}: ${f} is not one of its fields`);
      for (const [k, s] of Object.entries(t.fields.properties)) {
        const schema = s as { type?: string; anyOf?: Array<{ type?: string }> };
        const acceptsString = schema.type === 'string' || !!schema.anyOf?.some((a) => a.type === 'string');
        assert.ok(acceptsString, `${id}.${k} must accept a string (the spec writes every value as a string)`);
      }
      // The type-specific rules the service reads from the definition name fields that exist.
      for (const f of t.requiredCommon ?? [])
        assert.ok(f in COMMON_FIELDS && f !== 'name', `${id}: requiredCommon ${f} is not an optional common field`);
      for (const f of Object.keys(t.defaults ?? {}))
        assert.ok(f in t.fields.properties || f in COMMON_FIELDS, `${id}: default for unknown field ${f}`);
      for (const f of Object.keys(t.absentMeans ?? {}))
        assert.ok(f in t.fields.properties, `${id}: absentMeans for ${f}, not one of its fields`);
      if (t.defaults?.timeout !== undefined) {
        const s = Number(t.defaults.timeout);
        assert.ok(Number.isInteger(s) && s >= 1 && s <= 300, `${id}: default timeout ${t.defaults.timeout} not 1-300`);
      }
      if (t.autoThresholds === false)
        assert.equal(t.thresholdsOn?.({ name: 'x' }), 'value', `${id}: no auto thresholds, yet thresholds on time`);
    }
  } finally {
    await close();
  }
});
