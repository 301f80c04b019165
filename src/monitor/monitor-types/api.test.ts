import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  BASIC_PASSWORD,
  BASIC_USER,
  startHttpTargets,
  type HttpTargets,
} from '../../../test/support/http-targets.fixture.js';
import { AppError } from '../../core/errors.js';
import apiTypeDefault, { apiType, createApiType } from './api.js';
import { createRegexRunner } from './lib/safe-regex.js';
import { createNetworkPolicy } from './lib/network-policy.js';
import { makeCheckContext } from './lib/check-context.kit.js';
import type { CheckResult, MonitorConfig } from './types.js';

let t: HttpTargets;
let other: HttpTargets;
before(async () => {
  [t, other] = await Promise.all([startHttpTargets(), startHttpTargets()]);
});
after(async () => {
  await Promise.all([t.close(), other.close()]);
});

async function run(
  config: Partial<MonitorConfig>,
  opts: Parameters<typeof makeCheckContext>[0] = {},
): Promise<CheckResult> {
  const ctx = makeCheckContext(opts);
  try {
    return await apiType.check({ name: 'm', typeApi: 'GET', ...config }, ctx);
  } finally {
    ctx.dispose();
  }
}

const isField = (field: string) => (e: unknown) =>
  e instanceof AppError && e.code === 'VALIDATION' && e.field === field;

describe('api type: contract and validation', () => {
  it('exports, required, secrets', () => {
    assert.equal(apiTypeDefault, apiType);
    assert.equal(apiType.id, 'api');
    assert.deepEqual(apiType.required, ['api']);
    assert.deepEqual(apiType.defaults, { typeApi: 'GET' });
    assert.deepEqual(apiType.secretFields, ['basicAuthPwd', 'clientCert', 'clientCertKey']);
  });

  it('rejects each bad field with its name', () => {
    const ok = { name: 'm', api: 'http://x/', typeApi: 'GET' };
    const bad: [Partial<MonitorConfig>, string][] = [
      [{ api: 'gopher://x/' }, 'api'],
      [{ typeApi: 'PATCH' }, 'typeApi'],
      [{ pattern: '(\\d+)', threshOn: 'both' }, 'threshOn'],
      [{ threshOn: 'value' }, 'threshOn'],
      [{ respThreshMin: 'fast' }, 'respThreshMin'],
      [{ respThreshMin: '500', respThreshCri: '100' }, 'respThreshMin'],
      [{ pattern: '(?<v>\\d+' }, 'pattern'],
      [{ pattern: '(\\d+)', matchIndex: '-1' }, 'matchIndex'],
      [{ pattern: '(\\d+)', matchIndex: '1.5' }, 'matchIndex'],
      [{ pattern: '(\\d+)', matchGroupName: 'v' }, 'matchGroupName'],
      [{ pattern: '(\\d+)', matchIndex: '2' }, 'matchIndex'],
      [{ pattern: '(a)\\1' }, 'pattern'],
      [{ pattern: 'v(?=1)' }, 'pattern'],
      [{ pattern: '(\\d+)', patternComp: 'number >=', patternCompValCri: '1' }, 'patternComp'],
      [{ pattern: '(\\d+)', patternComp: 'number >' }, 'patternCompValCri'],
      [{ pattern: '(\\d+)', patternComp: 'number >', patternCompValCri: 'abc' }, 'patternCompValCri'],
      [{ patternComp: 'string ==', patternCompValCri: 'x' }, 'pattern'],
      [{ headers: 'X-A:1,broken' }, 'headers'],
      [{ headers: 'Bad Name:1' }, 'headers'],
      [{ clientCert: '/tmp/c.pem' }, 'clientCertKey'],
      [{ clientCertKey: '/tmp/k.pem' }, 'clientCert'],
      [{ basicAuthPwd: 'x' }, 'basicAuthUser'],
      [{ ignoreTlsErrors: '1' }, 'ignoreTlsErrors'],
    ];
    for (const [cfg, field] of bad) {
      assert.throws(() => apiType.validate!({ ...ok, ...cfg }), isField(field), JSON.stringify(cfg));
    }
    apiType.validate!({
      ...ok,
      typeApi: 'POST',
      pattern: '"temp":(?<t>\\d+)',
      matchGroupName: 't',
      patternComp: 'number >',
      patternCompValCri: '40',
      headers: 'X-A: 1, Accept:application/json',
      basicAuthUser: 'u',
      basicAuthPwd: 'p',
    });
  });

  it('typeApi: any case, stored upper case; threshOn defaults from the pattern', () => {
    const c = { name: 'm', api: 'http://x/', typeApi: 'post' } as MonitorConfig;
    apiType.validate!(c);
    assert.equal(c.typeApi, 'POST');
    assert.equal(c.threshOn, 'responseTime', 'no pattern: thresholds compare the response time');
    const withNumber = { name: 'm', api: 'http://x/', typeApi: 'GET', pattern: '(\\d+)' } as MonitorConfig;
    apiType.validate!(withNumber);
    assert.equal(withNumber.threshOn, 'value');
    const asString = {
      ...withNumber,
      threshOn: undefined,
      patternComp: 'string contains',
      patternCompValCri: 'x',
    } as MonitorConfig;
    apiType.validate!(asString);
    assert.equal(asString.threshOn, 'responseTime', 'a string comparison: the value is not a number');
    const matchOnly = { name: 'm', api: 'http://x/', typeApi: 'GET', pattern: 'pong' } as MonitorConfig;
    apiType.validate!(matchOnly);
    assert.equal(matchOnly.threshOn, 'responseTime', 'a pattern without a group only has to match');
  });
});

describe('api type: requests', () => {
  it('POST with headers and body; JSON content type inferred', async () => {
    const r = await run({
      api: `${t.httpUrl}/echo`,
      typeApi: 'POST',
      headers: 'X-Trace:abc,X-Other: two',
      body: '{"a":1}',
    });
    assert.equal(r.outcome, 'up', r.message);
    const got = t.received.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.headers['x-trace'], 'abc');
    assert.equal(got.headers['x-other'], 'two');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.body, '{"a":1}');
    assert.equal(r.details?.bodyFormat, 'json');
  });

  it('PUT and DELETE use their method; GET sends no body', async () => {
    for (const m of ['PUT', 'DELETE', 'GET']) {
      const r = await run({ api: `${t.httpUrl}/echo`, typeApi: m, body: 'x' });
      assert.equal(r.outcome, 'up');
      const got = t.received.at(-1)!;
      assert.equal(got.method, m);
      assert.equal(got.body, m === 'PUT' ? 'x' : '');
    }
  });

  it('basic auth: accepted → up; wrong password → error 401; password never in the result', async () => {
    const ok = await run({ api: `${t.httpUrl}/basic-auth`, basicAuthUser: BASIC_USER, basicAuthPwd: BASIC_PASSWORD });
    assert.equal(ok.outcome, 'up', ok.message);
    const bad = await run({ api: `${t.httpUrl}/basic-auth`, basicAuthUser: BASIC_USER, basicAuthPwd: 'wrong' });
    assert.equal(bad.outcome, 'error');
    assert.match(bad.message ?? '', /401/);
    assert.doesNotMatch(JSON.stringify([ok, bad]), new RegExp(`${BASIC_PASSWORD}|wrong`));
  });

  it('credentials and sensitive headers are not sent to another origin after a redirect', async () => {
    const to = encodeURIComponent(`${other.httpUrl}/echo`);
    const r = await run({
      api: `${t.httpUrl}/redirect?to=${to}`,
      basicAuthUser: BASIC_USER,
      basicAuthPwd: BASIC_PASSWORD,
      headers: 'X-Api-Key:k1,Authorization:Bearer t1,X-Plain:visible',
    });
    assert.equal(r.outcome, 'up', r.message);
    const first = t.received.at(-1)!;
    assert.match(String(first.headers.authorization), /^Basic /);
    assert.equal(first.headers['x-api-key'], 'k1');
    const got = other.received.at(-1)!;
    assert.equal(got.url, '/echo');
    assert.equal(got.headers.authorization, undefined);
    assert.equal(got.headers['x-api-key'], undefined);
    assert.equal(got.headers['x-plain'], 'visible');
  });

  it('same-origin redirect keeps credentials', async () => {
    const r = await run({
      api: `${t.httpUrl}/redirect?to=/basic-auth`,
      basicAuthUser: BASIC_USER,
      basicAuthPwd: BASIC_PASSWORD,
    });
    assert.equal(r.outcome, 'up', r.message);
  });

  it('500 → error; refused → down; policy → exception; hang → down', async () => {
    assert.equal((await run({ api: `${t.httpUrl}/status/500` })).outcome, 'error');
    assert.equal((await run({ api: 'http://127.0.0.1:1/' })).outcome, 'down');
    const denied = await run({ api: `${t.httpUrl}/json` }, { policy: createNetworkPolicy({ allow: ['10.0.0.0/8'] }) });
    assert.equal(denied.outcome, 'exception');
    assert.match(denied.message ?? '', /not in the network policy's allowed ranges/);
    const hang = await run({ api: `${t.httpUrl}/hang` }, { timeoutMs: 250 });
    assert.equal(hang.outcome, 'down');
    assert.equal(hang.message, 'timeout after 250 ms');
  });
});

describe('api type: extraction and comparison', () => {
  it('JSON: named group → value, number > 40 with 42 → CRITICAL', async () => {
    const r = await run({
      api: `${t.httpUrl}/json`,
      pattern: '"temp":(?<t>\\d+)',
      matchGroupName: 't',
      patternComp: 'number >',
      patternCompValCri: '40',
    });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(r.severity, 'CRITICAL');
    assert.equal(r.details?.extracted, '42');
    assert.equal(r.metrics?.extractedValue, 42);
  });

  it('comparison not holding → no severity', async () => {
    const r = await run({
      api: `${t.httpUrl}/json`,
      pattern: '"temp":(\\d+)',
      patternComp: 'number <',
      patternCompValCri: '40',
    });
    assert.equal(r.outcome, 'up');
    assert.equal(r.severity, undefined);
    assert.equal(r.details?.extracted, '42');
  });

  it('matchIndex chooses the group; no groups → whole match', async () => {
    const r = await run({
      api: `${t.httpUrl}/json`,
      pattern: '"(name)":"(\\w+)"',
      matchIndex: '2',
      patternComp: 'string ==',
      patternCompValCri: 'sensor',
    });
    assert.equal(r.details?.extracted, 'sensor');
    assert.equal(r.severity, 'CRITICAL');
    const whole = await run({ api: `${t.httpUrl}/json`, pattern: 'sens\\w+' });
    assert.equal(whole.details?.extracted, 'sensor');
  });

  it('XML: pattern on the raw text, string contains → CRITICAL', async () => {
    const r = await run({
      api: `${t.httpUrl}/xml`,
      pattern: '<state>(?<s>[^<]+)</state>',
      matchGroupName: 's',
      patternComp: 'string contains',
      patternCompValCri: 'run',
    });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(r.details?.bodyFormat, 'xml');
    assert.equal(r.details?.extracted, 'running');
    assert.equal(r.severity, 'CRITICAL');
    const n = await run({
      api: `${t.httpUrl}/xml`,
      pattern: '<temp[^>]*>(\\d+)</temp>',
      patternComp: 'number ==',
      patternCompValCri: '42',
    });
    assert.equal(n.severity, 'CRITICAL');
    assert.equal(n.metrics?.extractedValue, 42);
  });

  it('declared JSON that does not parse → error; malformed XML → error', async () => {
    const j = await run({ api: `${t.httpUrl}/json?bad=1` });
    assert.equal(j.outcome, 'error');
    assert.match(j.message ?? '', /invalid JSON/);
    const x = await run({ api: `${t.httpUrl}/xml?bad=1` });
    assert.equal(x.outcome, 'error');
    assert.match(x.message ?? '', /invalid XML/);
  });

  it('pattern absent → error; non-numeric value for a number comparison → error', async () => {
    assert.equal((await run({ api: `${t.httpUrl}/json`, pattern: 'humidity' })).outcome, 'error');
    const r = await run({
      api: `${t.httpUrl}/json`,
      pattern: '"name":"(\\w+)"',
      patternComp: 'number >',
      patternCompValCri: '1',
    });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /not a number/);
  });

  it('a pattern catastrophic for a backtracking engine on a 1 MiB body → its real verdict (linear time)', async () => {
    const r = await run({ api: `${t.httpUrl}/huge`, pattern: '(x+x+)+y' });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /pattern not found/);
  });

  it('a stored pattern the engine refuses (saved by an older version) → exception naming the field', async () => {
    const r = await run({ api: `${t.httpUrl}/json`, pattern: '"(\\w+)":"\\1"' });
    assert.equal(r.outcome, 'exception');
    assert.match(r.message ?? '', /pattern cannot run: backreferences/);
  });
});

describe('api type: mTLS', () => {
  let dataDir: string;
  let certDir: string;
  let pem: { cert: string; key: string };
  const regex = createRegexRunner();
  let withDir: ReturnType<typeof createApiType>;
  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-cc-'));
    certDir = path.join(dataDir, 'client-certs');
    fs.mkdirSync(certDir);
    pem = {
      cert: fs.readFileSync(t.certs.clientCertPath, 'utf8'),
      key: fs.readFileSync(t.certs.clientKeyPath, 'utf8'),
    };
    fs.writeFileSync(path.join(certDir, 'c.pem'), pem.cert);
    fs.writeFileSync(path.join(certDir, 'k.pem'), pem.key);
    withDir = createApiType({ regex, dataDir });
  });
  after(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await regex.close();
  });
  const runWith = async (config: Partial<MonitorConfig>): Promise<CheckResult> => {
    const ctx = makeCheckContext({});
    try {
      return await withDir.check({ name: 'm', typeApi: 'GET', ...config }, ctx);
    } finally {
      ctx.dispose();
    }
  };

  it('PEM text in clientCert/clientCertKey → the mTLS route answers 200', async () => {
    const cfg = { api: `${t.httpsUrl}/mtls`, clientCert: pem.cert, clientCertKey: pem.key, ignoreTlsErrors: 'true' };
    apiType.validate!({ name: 'm', typeApi: 'GET', ...cfg });
    const r = await run(cfg);
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(t.received.at(-1)!.clientCertCN, 'test-client');
  });

  it('file names in <DATA_DIR>/client-certs/ → the mTLS route answers 200', async () => {
    const cfg = { api: `${t.httpsUrl}/mtls`, clientCert: 'c.pem', clientCertKey: 'k.pem', ignoreTlsErrors: 'true' };
    withDir.validate!({ name: 'm', typeApi: 'GET', ...cfg });
    const r = await runWith(cfg);
    assert.equal(r.outcome, 'up', r.message);
  });

  it("create refuses paths, escapes, non-PEM and a key that is not the certificate's", () => {
    const ok = { name: 'm', api: 'https://x/', typeApi: 'GET' };
    const otherKey = t.certs.serverKeyPem;
    const bad: [Partial<MonitorConfig>, string, RegExp][] = [
      [{ clientCert: '/etc/passwd', clientCertKey: pem.key }, 'clientCert', /PEM text itself .* server paths/],
      [{ clientCert: pem.cert, clientCertKey: '../k.pem' }, 'clientCertKey', /PEM text itself/],
      [{ clientCert: 'missing.pem', clientCertKey: pem.key }, 'clientCert', /no readable regular file/],
      [{ clientCert: '-----BEGIN CERTIFICATE-----\nnope', clientCertKey: pem.key }, 'clientCert', /not a PEM cert/],
      [
        { clientCert: pem.cert, clientCertKey: '-----BEGIN PRIVATE KEY-----\nx' },
        'clientCertKey',
        /not an unencrypted/,
      ],
      [{ clientCert: pem.cert, clientCertKey: otherKey }, 'clientCertKey', /not the private key/],
      [{ clientCert: `-----BEGIN ${'x'.repeat(70_000)}`, clientCertKey: pem.key }, 'clientCert', /larger than 64 KiB/],
    ];
    for (const [cfg, field, msg] of bad) {
      assert.throws(
        () => withDir.validate!({ ...ok, ...cfg }),
        (e: unknown) => isField(field)(e) && msg.test((e as Error).message),
        JSON.stringify(cfg).slice(0, 80),
      );
    }
  });

  it('without a client certificate → error 401', async () => {
    const r = await run({ api: `${t.httpsUrl}/mtls`, ignoreTlsErrors: 'true' });
    assert.equal(r.outcome, 'error');
  });

  it('a server path stored by an older version → exception naming the field; nothing is read', async () => {
    const r = await run({
      api: `${t.httpsUrl}/mtls`,
      clientCert: t.certs.clientCertPath,
      clientCertKey: t.certs.clientKeyPath,
    });
    assert.equal(r.outcome, 'exception');
    assert.match(r.message ?? '', /^clientCert must be the PEM text itself/);
    assert.ok(!(r.message ?? '').includes(t.certs.clientCertPath), 'the path is not echoed');
  });

  it('a file removed after create → exception with the one generic message', async () => {
    fs.copyFileSync(path.join(certDir, 'c.pem'), path.join(certDir, 'gone.pem'));
    withDir.validate!({ name: 'm', api: 'https://x/', typeApi: 'GET', clientCert: 'gone.pem', clientCertKey: 'k.pem' });
    fs.rmSync(path.join(certDir, 'gone.pem'));
    const r = await runWith({ api: `${t.httpsUrl}/mtls`, clientCert: 'gone.pem', clientCertKey: 'k.pem' });
    assert.equal(r.outcome, 'exception');
    assert.match(r.message ?? '', /clientCert: no readable regular file .* "gone\.pem"/);
  });

  it('the client certificate is not presented to another origin after a redirect', async () => {
    const to = encodeURIComponent(`${other.httpsUrl}/mtls`);
    const r = await run({
      api: `${t.httpsUrl}/redirect?to=${to}`,
      clientCert: pem.cert,
      clientCertKey: pem.key,
      ignoreTlsErrors: 'true',
    });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /401/);
    const got = other.received.at(-1)!;
    assert.equal(got.url, '/mtls');
    assert.equal(got.clientCertCN, undefined);
  });
});
