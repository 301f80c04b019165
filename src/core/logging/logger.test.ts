import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, test } from 'node:test';
import { createServiceLogger, rotatedName } from './logger.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'logger-unit-'));
  dirs.push(d);
  return d;
}

async function waitFor(fn: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > timeoutMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// rotating-file-stream adds no .gz to names from a generator function, so the generator must return the .gz name.
test('rotated file names: <service>.log now, <service>-YYYYMMDD-HHMM-N.log.gz when rotated', () => {
  const name = rotatedName('monitor');
  assert.equal(name(null), 'monitor.log');
  assert.equal(name(Date.UTC(2026, 0, 2, 3, 4), 2), 'monitor-20260102-0304-2.log.gz');
});

test('JSON lines to <logDir>/<service>.log; the level changes live; secrets are redacted', async () => {
  const dir = tmp();
  const l = createServiceLogger({ service: 'svc', logDir: dir, level: 'info' });
  l.log.debug('hidden-debug-line');
  l.log.info(
    {
      password: 'pw-secret-1',
      nested: { password: 'pw-secret-2', token: 'tok-secret-3', smtpPassword: 'pw-secret-4' },
      req: { headers: { authorization: 'Bearer tok-secret-5' } },
    },
    'with secrets',
  );
  l.setLevel('debug');
  l.log.debug('shown-debug-line');
  await l.close();
  const text = fs.readFileSync(l.file, 'utf8');
  assert.equal(l.file, path.join(dir, 'svc.log'));
  const lines = text
    .trim()
    .split('\n')
    .map((x) => JSON.parse(x));
  assert.ok(lines.every((x) => x.service === 'svc' && typeof x.time === 'number'));
  assert.ok(!text.includes('hidden-debug-line'));
  assert.ok(text.includes('shown-debug-line'));
  assert.ok(text.includes('[redacted]'));
  for (const s of ['pw-secret-1', 'pw-secret-2', 'tok-secret-3', 'pw-secret-4', 'tok-secret-5'])
    assert.ok(!text.includes(s), s);
});

test('past 10 MB the log rotates and the old part is gzipped to a *.log.gz of valid JSON lines', async () => {
  const dir = tmp();
  const l = createServiceLogger({ service: 'rot', logDir: dir, level: 'info' });
  const pad = 'x'.repeat(2000);
  for (let i = 0; i < 5600; i++) {
    l.log.info({ i, pad }, 'filler');
    if (i % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  const gz = () => fs.readdirSync(dir).filter((f) => /^rot-\d{8}-\d{4}-\d+\.log/.test(f));
  await waitFor(() => gz().length > 0, 'a rotated log');
  l.log.info('after rotation');
  await l.close();
  const file = path.join(dir, gz()[0]!);
  await waitFor(() => {
    try {
      zlib.gunzipSync(fs.readFileSync(file));
      return true;
    } catch {
      return false;
    }
  }, 'a complete gzip file');
  const lines = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').trim().split('\n');
  assert.ok(lines.length > 1000);
  for (const line of [lines[0]!, lines[lines.length - 1]!]) assert.equal(JSON.parse(line).msg, 'filler');
  assert.ok(
    fs.readFileSync(path.join(dir, 'rot.log'), 'utf8').includes('after rotation'),
    'logging continues in rot.log',
  );
  assert.match(gz()[0]!, /\.log\.gz$/, 'the gzipped file is named *.log.gz');
});
