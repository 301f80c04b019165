import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../../core/errors.js';
import { type LmdbStore, openLmdbStore } from '../../core/storage/lmdb-store.js';
import { createMaintenance } from './maintenance.js';

const at = (iso: string) => Date.parse(iso);

describe('maintenance windows', () => {
  let dir: string;
  let store: LmdbStore;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'maint-'));
    store = await openLmdbStore({ path: dir, noSync: true });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one-off window: [from, to) for listed monitors only', async () => {
    const m = createMaintenance({ store });
    const w = await m.create({
      name: 'db upgrade',
      from: String(at('2030-01-01T10:00:00Z')),
      to: String(at('2030-01-01T11:00:00Z')),
      monitors: 'db1, db2',
    });
    assert.equal(w.name, 'db upgrade');
    assert.equal(m.isInWindow({ name: 'db1' }, at('2030-01-01T09:59:59Z')), false);
    assert.equal(m.isInWindow({ name: 'db1' }, at('2030-01-01T10:00:00Z')), true);
    assert.equal(m.isInWindow({ name: 'db2' }, at('2030-01-01T10:59:59Z')), true);
    assert.equal(m.isInWindow({ name: 'db1' }, at('2030-01-01T11:00:00Z')), false);
    assert.equal(m.isInWindow({ name: 'web' }, at('2030-01-01T10:30:00Z')), false);
    assert.equal(await m.remove(w.id), true);
    assert.equal(m.isInWindow({ name: 'db1' }, at('2030-01-01T10:30:00Z')), false);
    assert.equal(await m.remove(w.id), false);
  });

  it('recurring window by cron + duration, scoped by tag, survives a reload', async () => {
    const m = createMaintenance({ store });
    const w = await m.create({
      name: 'nightly',
      cron: '0 2 * * *',
      durationMinutes: '60',
      timezone: 'UTC',
      tags: '[backup,db]',
    });
    const tagged = { name: 'x', tags: '[web,db]' };
    const probe = (iso: string) => m.isInWindow(tagged, at(iso));
    assert.deepEqual(
      [
        '2030-03-05T01:59:59Z',
        '2030-03-05T02:00:00Z',
        '2030-03-05T02:30:00Z',
        '2030-03-05T02:59:59Z',
        '2030-03-05T03:00:00Z',
        '2030-03-06T02:10:00Z',
      ].map(probe),
      [false, true, true, true, false, true],
    );
    assert.equal(m.isInWindow({ name: 'x', tags: ['web'] }, at('2030-03-05T02:30:00Z')), false);
    const again = createMaintenance({ store });
    await again.load();
    assert.equal(again.isInWindow({ name: 'y', tags: ['backup'] }, at('2030-03-05T02:30:00Z')), true);
    const listed = again.list(at('2030-03-05T02:30:00Z')).find((x) => x.id === w.id)!;
    assert.equal(listed.active, true);
    assert.equal(listed.nextChangeMs, at('2030-03-05T03:00:00Z'));
    await again.remove(w.id);
  });

  it("overlapping occurrences and '*' scope", async () => {
    const m = createMaintenance({ store });
    const w = await m.create({
      name: 'always',
      cron: '*/10 * * * *',
      durationMinutes: '15',
      timezone: 'UTC',
      monitors: '*',
    });
    assert.equal(m.isInWindow({ name: 'anything' }, at('2030-03-05T02:09:00Z')), true);
    assert.equal(m.list(at('2030-03-05T02:09:00Z'))[0]!.nextChangeMs! > at('2030-03-05T03:00:00Z'), true);
    await m.remove(w.id);
  });

  it('400 naming the field on a bad body', async () => {
    const m = createMaintenance({ store });
    const cases: Array<[Record<string, string>, string]> = [
      [{ from: '1', to: '2', monitors: 'a' }, 'name'],
      [{ name: 'n', from: '1', to: '2' }, 'monitors'],
      [{ name: 'n', from: '5', to: '2', monitors: 'a' }, 'to'],
      [{ name: 'n', from: 'yesterday', to: '2', monitors: 'a' }, 'from'],
      [{ name: 'n', cron: 'not a cron', durationMinutes: '5', monitors: 'a' }, 'cron'],
      [{ name: 'n', cron: '0 2 * * *', durationMinutes: '0', monitors: 'a' }, 'durationMinutes'],
      [{ name: 'n', cron: '0 2 * * *', durationMinutes: '10', timezone: 'Mars/Base', monitors: 'a' }, 'timezone'],
      [{ name: 'n', monitors: 'a' }, 'cron'],
    ];
    for (const [body, field] of cases) {
      const e = await m.create(body).catch((x) => x);
      assert.ok(isAppError(e) && e.status === 400, `${JSON.stringify(body)} → ${e}`);
      assert.equal(e.field, field, JSON.stringify(body));
    }
  });
});
