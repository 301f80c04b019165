/**
 * docs/security.md §18 (review F18: a slow-body connection stayed open ≥ 130 s). Through real mTLS connections to
 * both services: a request whose body trickles in, headers that never end, and an idle kept-alive connection are each
 * closed by the server (the body case with 408). Bounds come from REQUEST_TIMEOUT_MS (2 s here); the test asserts
 * the close happens, and the test timeout (20 s) is only the generous upper bound that fails the code before the fix.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import path from 'node:path';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, type AgentHarness } from '../support/agent.harness.js';
import { certsFrom } from '../support/https-client.kit.js';

let m: MonitorHarness;
let a: AgentHarness;
const env = { REQUEST_TIMEOUT_MS: '2000' };

before(async () => {
  [m, a] = await Promise.all([startMonitor({ env }), startAgent({}, env)]);
});
after(async () => {
  await m?.stop();
  await a?.close();
});

interface Outcome {
  received: string;
  closedAfterMs: number;
}

/** Opens an mTLS connection, writes `first`, then keeps writing `trickle` every 300 ms until the server closes. */
function holdOpen(url: string, dataDir: string, first: string, trickle: string | null): Promise<Outcome> {
  const u = new URL(url);
  const certs = certsFrom(path.join(dataDir, 'certs'));
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const s = tls.connect({ host: u.hostname, port: Number(u.port), ...certs, servername: 'localhost' }, () => {
      s.write(first);
      if (trickle !== null) timer = setInterval(() => s.writable && s.write(trickle), 300);
    });
    s.on('data', (d: Buffer) => (received += d.toString('utf8')));
    s.on('error', () => undefined); // a reset is a close too
    s.on('close', () => {
      clearInterval(timer);
      resolve({ received, closedAfterMs: Date.now() - t0 });
    });
    s.on('timeout', () => reject(new Error('unreachable')));
  });
}

const slowBody = (host: string) =>
  `POST /login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":`;
const slowHeaders = (host: string) => `GET /ping HTTP/1.1\r\nHost: ${host}\r\n`;

for (const svc of ['monitor', 'agent'] as const) {
  const target = () => (svc === 'monitor' ? { url: m.url, dataDir: m.dataDir } : { url: a.url, dataDir: a.dataDir });

  test(`${svc}: a body that trickles in is cut with 408 and the connection closed`, { timeout: 20_000 }, async () => {
    const { url, dataDir } = target();
    const o = await holdOpen(url, dataDir, slowBody(new URL(url).host), ' ');
    assert.match(o.received, /^HTTP\/1\.1 408/, `answer: ${o.received.slice(0, 80)}`);
    console.log(`${svc} slow body closed after ${o.closedAfterMs} ms`);
  });

  test(`${svc}: headers that never end are cut and the connection closed`, { timeout: 20_000 }, async () => {
    const { url, dataDir } = target();
    const o = await holdOpen(url, dataDir, slowHeaders(new URL(url).host), 'X-Slow: 1\r\n');
    assert.doesNotMatch(o.received, /^HTTP\/1\.1 200/);
    console.log(`${svc} slow headers closed after ${o.closedAfterMs} ms`);
  });

  test(`${svc}: a connection that sends nothing is closed`, { timeout: 20_000 }, async () => {
    const { url, dataDir } = target();
    const o = await holdOpen(url, dataDir, '', null);
    assert.equal(o.received.startsWith('HTTP/1.1 200'), false);
    console.log(`${svc} silent connection closed after ${o.closedAfterMs} ms`);
  });

  test(`${svc}: an ordinary request still works`, async () => {
    const r = await (svc === 'monitor' ? m.admin : a.admin).request('GET', '/ping');
    assert.equal(r.status, 200, r.text);
  });
}
