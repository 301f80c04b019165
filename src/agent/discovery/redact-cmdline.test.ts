/** redactCommandLine: credential-like arguments become ***, the rest of the command line stays readable. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactCommandLine } from './redact-cmdline.js';

test('credential arguments are redacted in every common form', () => {
  const cases: Array<[string, string]> = [
    ['mysqld --password=hunter2 --port 3306', 'mysqld --password=*** --port 3306'],
    ['mysql -uroot -phunter2 db', 'mysql -uroot -p*** db'],
    ['app --password hunter2 --verbose', 'app --password *** --verbose'],
    ['app --client-secret s3 --api-key k1', 'app --client-secret *** --api-key ***'],
    ['app token=abc PGPASSWORD=x user=bob', 'app token=*** PGPASSWORD=*** user=bob'],
    ['app Server=db;Password=p1;Database=d', 'app Server=db;Password=***;Database=d'],
    ['curl https://u:p@h.example/x?api_key=k&q=1', 'curl https://u:***@h.example/x?api_key=***&q=1'],
    ['git clone https://ghp_tok@github.com/o/r', 'git clone https://***@github.com/o/r'],
    ['/usr/sbin/sshd -D', '/usr/sbin/sshd -D'],
    ['[kworker/0:1]', '[kworker/0:1]'],
    ['node server.js --port 8080 --host=0.0.0.0', 'node server.js --port 8080 --host=0.0.0.0'],
  ];
  for (const [input, want] of cases) assert.equal(redactCommandLine(input), want, input);
});

test('a secret flag at the end or before another flag hides nothing else', () => {
  assert.equal(redactCommandLine('app --password'), 'app --password');
  assert.equal(redactCommandLine('app --password --debug'), 'app --password --debug');
});
