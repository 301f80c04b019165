/**
 * The registry matches the folder: every collector file (kebab-case name) is registered under its own id (the
 * camelCase of the file name), exports its factory `create<Id>Collector`, and every registered collector has a file.
 * Each collector reports the id it is registered under and runs against the real /proc.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createProcessSampler } from '../../../core/system/processes.js';
import { createSocketOwnerResolver } from '../../../core/system/sockets.js';
import { createCollectors } from './registry.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const NOT_COLLECTORS = new Set(['types.ts', 'registry.ts']);
const camel = (kebab: string): string => kebab.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

test('every collector file is registered under its own id, and every registered collector has a file', async () => {
  const files = fs
    .readdirSync(here)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !NOT_COLLECTORS.has(f));
  const fileIds = files.map((f) => camel(f.replace(/\.ts$/, '')));
  const collectors = createCollectors({ processes: createProcessSampler(), sockets: createSocketOwnerResolver() });
  assert.deepEqual(Object.keys(collectors).sort(), [...fileIds].sort());
  for (const f of files) {
    const id = camel(f.replace(/\.ts$/, ''));
    const mod = (await import(pathToFileURL(path.join(here, f)).href)) as Record<string, unknown>;
    const factory = `create${id[0]!.toUpperCase()}${id.slice(1)}Collector`;
    assert.equal(typeof mod[factory], 'function', `${f} exports ${factory}`);
  }
  for (const [id, c] of Object.entries(collectors)) {
    assert.equal(c.id, id, `collector registered as ${id} says it is ${c.id}`);
    assert.equal(typeof c.collect, 'function');
    const out = await c.collect({ now: Date.now });
    assert.ok(out !== undefined && out !== null, `${id} produced nothing`);
  }
});
