/**
 * The byte tables written into history records never reorder: a status code and a dbname index are stored in chunks,
 * rollups, transitions and WAL records, so moving an entry would silently change what old data means on replay.
 * A new status or type is appended at the end (and the pinned list here extended); anything else needs a migration.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DBNAMES, STATUSES, STATUS_CODE } from './types.js';
import { decodeWalRecord, encodeWalRecord } from './history-wal.js';

test('status codes are pinned (chunks, rollups, transitions, latest)', () => {
  const pinned = ['OK', 'MINOR', 'MAJOR', 'CRITICAL', 'DOWN', 'ERROR', 'EXCEPTION', 'DOWNTIME'];
  assert.deepEqual(STATUSES.slice(0, pinned.length), pinned, 'existing codes keep their byte; append new ones');
  pinned.forEach((s, i) => assert.equal(STATUS_CODE[s as keyof typeof STATUS_CODE], i));
  assert.ok(STATUSES.length <= 8, 'a chunk row keeps the status in 3 bits');
});

test('dbname indexes are pinned (WAL records)', () => {
  const pinned = ['exec', 'url', 'api', 'tcp', 'ping', 'nslookup', 'snmp', 'db', 'sys', 'push'];
  assert.deepEqual(DBNAMES.slice(0, pinned.length), pinned, 'existing types keep their byte; append new ones');
  const bytes = encodeWalRecord([{ db: 'snmp', name: 'n', row: { ts: 5, code: 2, resp: 1, extra: false } }]);
  assert.equal(bytes[0], 6, 'snmp is byte 6 in a WAL record');
  assert.equal(decodeWalRecord(bytes)[0]!.db, 'snmp');
});
