/** har-scrub: session headers redacted by name (any case), cookies[] emptied, other headers kept, junk refused. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactedHeaderSet, scrubHarText } from './har-scrub.js';

test('session headers and cookie arrays are scrubbed; other headers stay', () => {
  const har = {
    log: {
      entries: [
        {
          request: {
            headers: [
              { name: 'Cookie', value: 'a=1' },
              { name: 'AUTHORIZATION', value: 'Bearer x' },
              { name: 'x-api-key', value: 'k' },
              { name: 'Accept', value: 'text/html' },
            ],
            cookies: [{ name: 'a', value: '1' }],
          },
          response: { headers: [{ name: 'set-cookie', value: 'a=1' }], cookies: [{ name: 'a', value: '1' }] },
        },
      ],
    },
  };
  const out = JSON.parse(scrubHarText(JSON.stringify(har), redactedHeaderSet(' X-Api-Key ,'))!);
  const e = out.log.entries[0];
  assert.deepEqual(
    e.request.headers.map((h: { value: string }) => h.value),
    ['[redacted]', '[redacted]', '[redacted]', 'text/html'],
  );
  assert.equal(e.response.headers[0].value, '[redacted]');
  assert.deepEqual(e.request.cookies, []);
  assert.deepEqual(e.response.cookies, []);
});

test('text that is not a HAR is refused', () => {
  assert.equal(scrubHarText('{"log":', redactedHeaderSet('')), undefined);
  assert.equal(scrubHarText('{"x":1}', redactedHeaderSet('')), undefined);
});
