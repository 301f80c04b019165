import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSecretBox } from './secret-box.js';

test('secret box round-trips, keeps its key across opens, and detects tampering', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbox-'));
  const box = openSecretBox(dir, 'monitor');
  const sealed = box.encrypt('hunter2');
  assert.ok(box.isSealed(sealed));
  assert.ok(!sealed.includes('hunter2'));
  assert.notEqual(box.encrypt('hunter2'), sealed, 'random IV per value');
  assert.equal(openSecretBox(dir, 'monitor').decrypt(sealed), 'hunter2');
  assert.equal(fs.statSync(path.join(dir, 'monitor-secret.key')).mode & 0o777, 0o600);
  const raw = Buffer.from(sealed.slice(7), 'base64');
  raw[raw.length - 1]! ^= 1;
  assert.throws(() => box.decrypt('enc:v1:' + raw.toString('base64')));
  assert.throws(() => openSecretBox(fs.mkdtempSync(path.join(os.tmpdir(), 'sbox-')), 'monitor').decrypt(sealed));
});
