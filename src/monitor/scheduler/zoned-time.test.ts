import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTimezone, isoInZone } from './zoned-time.js';

test('isTimezone accepts IANA names and refuses unknown ones', () => {
  for (const ok of ['UTC', 'Europe/Berlin', 'europe/berlin', 'Asia/Kolkata', 'Etc/GMT+5'])
    assert.ok(isTimezone(ok), ok);
  for (const bad of ['', ' UTC', 'Mars/Olympus', 'Europe/Berlin; rm', 'x'.repeat(100)])
    assert.ok(!isTimezone(bad), bad);
});

test('isoInZone writes local time with the offset in force at that instant (DST both ways)', () => {
  const t = Date.UTC(2025, 2, 30, 0, 59, 59, 250); // one second before Berlin springs forward
  assert.equal(isoInZone(t, 'Europe/Berlin'), '2025-03-30T01:59:59.250+01:00');
  assert.equal(isoInZone(t + 1000, 'Europe/Berlin'), '2025-03-30T03:00:00.250+02:00');
  assert.equal(isoInZone(Date.UTC(2025, 9, 26, 0, 30), 'Europe/Berlin'), '2025-10-26T02:30:00.000+02:00');
  assert.equal(isoInZone(Date.UTC(2025, 9, 26, 1, 30), 'Europe/Berlin'), '2025-10-26T02:30:00.000+01:00');
  assert.equal(isoInZone(Date.UTC(2025, 0, 1, 0, 10), 'Asia/Kolkata'), '2025-01-01T05:40:00.000+05:30');
  assert.equal(isoInZone(Date.UTC(2025, 0, 1, 0, 10), 'America/St_Johns'), '2024-12-31T20:40:00.000-03:30');
  assert.equal(isoInZone(Date.UTC(2025, 5, 1, 12), 'UTC'), '2025-06-01T12:00:00.000+00:00');
  assert.equal(new Date(isoInZone(t, 'America/St_Johns')).getTime(), t, 'the ISO text is the same instant');
});
