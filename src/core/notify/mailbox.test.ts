import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEmailAddress, parseMailbox } from './mailbox.js';

test('isEmailAddress accepts local@domain and refuses what is not an address', () => {
  for (const ok of ['ops@example.com', 'a.b+tag@sub.example.co', 'root@localhost', "o'brien@x.io", 'x@[127.0.0.1]'])
    assert.ok(isEmailAddress(ok), ok);
  for (const bad of [
    'ops',
    'not an address',
    '@example.com',
    'ops@',
    'a..b@x.io',
    '.a@x.io',
    'a@-x.io',
    'a b@x.io',
    'a@x_y.io',
    `${'a'.repeat(65)}@x.io`,
  ])
    assert.ok(!isEmailAddress(bad), bad);
});

test('parseMailbox reads an address or a display name with an address', () => {
  assert.deepEqual(parseMailbox('alerts@example.com'), { address: 'alerts@example.com' });
  assert.deepEqual(parseMailbox('Sentinel <alerts@example.com>'), { name: 'Sentinel', address: 'alerts@example.com' });
  assert.deepEqual(parseMailbox('"Ops, Team" <ops@example.com>'), { name: 'Ops, Team', address: 'ops@example.com' });
  assert.deepEqual(parseMailbox('<ops@example.com>'), { address: 'ops@example.com' });
  for (const bad of [
    'not an address',
    'Sentinel',
    'Sentinel <not-an-address>',
    'A, B <ops@example.com>',
    'x <a@b.c>\r\nBcc: e@f.g',
    'Name <a@b.c> trailing',
  ])
    assert.equal(parseMailbox(bad), undefined, bad);
});
