import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHttpTargets, type HttpTargets } from '../../../test/support/http-targets.fixture.js';
import { AppError } from '../../core/errors.js';
import { createNetworkPolicy } from './lib/network-policy.js';
import { makeCheckContext } from './lib/check-context.kit.js';
import type { CheckResult, MonitorConfig } from './types.js';
import urlTypeDefault, { urlType } from './url.js';

let t: HttpTargets;
before(async () => {
  t = await startHttpTargets();
});
after(async () => {
  await t.close();
});

async function run(
  config: Partial<MonitorConfig>,
  opts: Parameters<typeof makeCheckContext>[0] = {},
): Promise<CheckResult> {
  const ctx = makeCheckContext(opts);
  try {
    return await urlType.check({ name: 'm', ...config }, ctx);
  } finally {
    ctx.dispose();
  }
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('url type: contract', () => {
  it('exports default and named, id url, required url, no secrets', () => {
    assert.equal(urlTypeDefault, urlType);
    assert.equal(urlType.id, 'url');
    assert.deepEqual(urlType.required, ['url']);
    assert.deepEqual(urlType.secretFields, []);
    assert.ok(urlType.fields.properties.url);
  });

  it('validate rejects bad URL, bad scheme, bad regex, bad boolean naming the field', () => {
    const bad: [Partial<MonitorConfig>, string][] = [
      [{ url: 'not a url' }, 'url'],
      [{ url: 'ftp://example.com/' }, 'url'],
      [{ url: 'file:///etc/passwd' }, 'url'],
      [{ url: '' }, 'url'],
      [{ url: 'http://x/', pattern: '(unclosed' }, 'pattern'],
      [{ url: 'http://x/', pattern: 'a(?!b)' }, 'pattern'],
      [{ url: 'http://x/', ignoreTlsErrors: 'yes' }, 'ignoreTlsErrors'],
    ];
    for (const [cfg, field] of bad) {
      assert.throws(
        () => urlType.validate!({ name: 'm', ...cfg }),
        (e: unknown) => {
          return e instanceof AppError && e.code === 'VALIDATION' && e.field === field;
        },
        JSON.stringify(cfg),
      );
    }
    urlType.validate!({ name: 'm', url: 'https://example.com/x', pattern: 'ok$', ignoreTlsErrors: 'false' });
  });
});

describe('url type: outcomes', () => {
  it('200 → up with timings and status code', async () => {
    const r = await run({ url: `${t.httpUrl}/ok` });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(r.metrics?.statusCode, 200);
    for (const k of ['dnsMs', 'connectMs', 'ttfbMs', 'totalMs']) assert.equal(typeof r.metrics?.[k], 'number', k);
    assert.equal(r.responseTimeMs, r.metrics?.totalMs);
    assert.equal(r.metrics?.tlsMs, undefined);
  });

  it('hostname target → dns time measured, still up', async () => {
    const r = await run({ url: `http://localhost:${t.httpPort}/ok` });
    assert.equal(r.outcome, 'up', r.message);
    assert.ok((r.metrics?.dnsMs ?? -1) >= 0);
  });

  it('500 → error naming the code', async () => {
    const r = await run({ url: `${t.httpUrl}/status/500` });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /500/);
    assert.equal(r.metrics?.statusCode, 500);
  });

  it('404 → error; 204 → up', async () => {
    assert.equal((await run({ url: `${t.httpUrl}/status/404` })).outcome, 'error');
    assert.equal((await run({ url: `${t.httpUrl}/status/204` })).outcome, 'up');
  });

  it('pattern present → up; absent → error; catastrophic for backtracking → its real verdict (linear time)', async () => {
    assert.equal((await run({ url: `${t.httpUrl}/ok`, pattern: 'hello\\s+ok' })).outcome, 'up');
    const absent = await run({ url: `${t.httpUrl}/ok`, pattern: 'goodbye' });
    assert.equal(absent.outcome, 'error');
    assert.match(absent.message ?? '', /pattern not found/);
    const evil = await run({ url: `${t.httpUrl}/huge`, pattern: '(x+x+)+y' });
    assert.equal(evil.outcome, 'error');
    assert.match(evil.message ?? '', /pattern not found/);
    const legacy = await run({ url: `${t.httpUrl}/ok`, pattern: '(h)\\1' });
    assert.equal(legacy.outcome, 'exception', 'a stored pattern the engine refuses');
    assert.match(legacy.message ?? '', /pattern cannot run: backreferences/);
  });

  it('connection refused → down', async () => {
    const r = await run({ url: `http://127.0.0.1:${await closedPort()}/` });
    assert.equal(r.outcome, 'down');
    assert.match(r.message ?? '', /ECONNREFUSED/);
  });

  it('DNS failure → down', async () => {
    const r = await run({ url: 'http://no-such-host.invalid/' });
    assert.equal(r.outcome, 'down');
    assert.match(r.message ?? '', /ENOTFOUND|EAI_AGAIN/);
  });

  it('hang → aborted by the signal: down with "timeout after N ms", socket released', async () => {
    const before = t.received.length;
    const r = await run({ url: `${t.httpUrl}/hang` }, { timeoutMs: 300 });
    assert.equal(r.outcome, 'down');
    assert.equal(r.message, 'timeout after 300 ms');
    assert.equal(t.received.length, before + 1);
  });

  it('slow beyond the timeout → down; within → up', async () => {
    assert.equal((await run({ url: `${t.httpUrl}/slow?ms=2000` }, { timeoutMs: 200 })).outcome, 'down');
    assert.equal((await run({ url: `${t.httpUrl}/slow?ms=10` })).outcome, 'up');
  });

  it('never-ending body → read stops at the cap (1 MiB), marked truncated, up', async () => {
    const r = await run({ url: `${t.httpUrl}/huge` });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(r.metrics?.bodyBytes, 1024 * 1024);
    assert.equal(r.details?.bodyTruncated, true);
  });
});

describe('url type: redirects', () => {
  it('follows up to 5 and records the chain', async () => {
    const r = await run({ url: `${t.httpUrl}/redirect?n=5&to=/ok` });
    assert.equal(r.outcome, 'up', r.message);
    const chain = r.details?.redirects as { statusCode: number; location: string }[];
    assert.equal(chain.length, 5);
    assert.equal(r.metrics?.redirectCount, 5);
    assert.match(String(r.details?.finalUrl), /\/ok$/);
  });

  it('a 6th redirect → error', async () => {
    const r = await run({ url: `${t.httpUrl}/redirect?n=6&to=/ok` });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /too many redirects/);
  });

  it('redirect to another scheme → error', async () => {
    const r = await run({ url: `${t.httpUrl}/redirect?to=${encodeURIComponent('ftp://127.0.0.1/')}` });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /unsupported scheme/);
  });

  it('URL userinfo credentials are not forwarded cross-origin, and redacted in results', async () => {
    const other = await startHttpTargets();
    try {
      const target = `${other.httpUrl}/echo`;
      const url = `http://monitor:s3cret@127.0.0.1:${t.httpPort}/redirect?to=${encodeURIComponent(target)}`;
      const r = await run({ url });
      assert.equal(r.outcome, 'up', r.message);
      const first = t.received.at(-1)!;
      assert.match(String(first.headers.authorization), /^Basic /);
      const got = other.received.at(-1)!;
      assert.equal(got.url, '/echo');
      assert.equal(got.headers.authorization, undefined);
      assert.doesNotMatch(JSON.stringify(r), /s3cret/);
    } finally {
      await other.close();
    }
  });
});

describe('url type: network policy', () => {
  it('denied IP literal → exception, nothing connected', async () => {
    const before = t.received.length;
    const policy = createNetworkPolicy({ deny: ['127.0.0.0/8'] });
    const r = await run({ url: `${t.httpUrl}/ok` }, { policy });
    assert.equal(r.outcome, 'exception');
    assert.match(r.message ?? '', /denied by the network policy \(127\.0\.0\.0\/8\)/);
    assert.equal(t.received.length, before);
  });

  it('denied resolved name → exception', async () => {
    const policy = createNetworkPolicy({ deny: ['127.0.0.0/8', '::1/128'] });
    const r = await run({ url: `http://localhost:${t.httpPort}/ok` }, { policy });
    assert.equal(r.outcome, 'exception');
  });

  it('checked again after a redirect', async () => {
    const policy = createNetworkPolicy({ deny: ['127.0.0.2/32'] });
    const r = await run(
      { url: `${t.httpUrl}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${t.httpPort}/ok`)}` },
      { policy },
    );
    assert.equal(r.outcome, 'exception');
    assert.match(r.message ?? '', /127\.0\.0\.2/);
    assert.equal((r.details?.redirects as unknown[]).length, 1);
  });

  it('the default policy denies the metadata address', async () => {
    const r = await run({ url: 'http://169.254.169.254/latest/meta-data/' });
    assert.equal(r.outcome, 'exception');
  });
});

describe('url type: https', () => {
  it('untrusted certificate → error with the reason (verification on by default)', async () => {
    const r = await run({ url: `${t.httpsUrl}/ok` });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /^TLS: .*(self-signed|self signed|unable to verify)/i);
  });

  it('ignoreTlsErrors → up with tls timing and cert days left (365 d: no level)', async () => {
    const r = await run({ url: `${t.httpsUrl}/ok`, ignoreTlsErrors: 'true' });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(typeof r.metrics?.tlsMs, 'number');
    assert.ok((r.metrics?.certDaysLeft ?? 0) > 360);
    assert.equal(r.severity, undefined);
  });

  it('a certificate with 10 days left → MAJOR; 3 days → CRITICAL; 20 days → MINOR', async () => {
    for (const [days, level] of [
      [10, 'MAJOR'],
      [3, 'CRITICAL'],
      [20, 'MINOR'],
    ] as const) {
      const s = await startHttpTargets({ serverCertDays: days });
      try {
        const r = await run({ url: `${s.httpsUrl}/ok`, ignoreTlsErrors: 'true' });
        assert.equal(r.outcome, 'up', r.message);
        assert.ok(Math.abs((r.metrics?.certDaysLeft ?? 0) - days) <= 1.01, String(r.metrics?.certDaysLeft));
        assert.equal(r.severity, level, `${days} days`);
      } finally {
        await s.close();
      }
    }
  });
});
