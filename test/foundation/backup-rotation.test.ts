/**
 * BACKUPS_KEPT through the API: POST /backupDatabase (monitor; {database} labels a whole-store backup) and the
 * agent's POST /backupDatabase keep only the newest N of their own backups in DATA_DIR/backups; each service leaves
 * the other's files alone.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startMonitor } from '../support/monitor.harness.js';

test('manual backups rotate at BACKUPS_KEPT, per service, and the database name labels the file', async () => {
  const h = await startMonitor({ env: { BACKUPS_KEPT: '2' } });
  try {
    const dir = path.join(h.dataDir, 'backups');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'agent-2026-01-01.mdb'), 'the agent owns this');
    const files: string[] = [];
    for (const database of ['url', 'tcp', 'sys']) {
      const r = await h.admin.request('POST', '/backupDatabase', { body: { database } });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.file.startsWith(`${database}-`), 'the name labels the whole-store backup');
      files.push(r.body.file);
    }
    assert.deepEqual(fs.readdirSync(dir).sort(), ['agent-2026-01-01.mdb', files[1], files[2]].sort());
  } finally {
    await h.stop();
  }
});
