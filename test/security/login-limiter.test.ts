/**
 * docs/security.md §14 (review: the login throttle was check-then-act — 100 concurrent attempts got 22–32 password
 * checks through a limit of 10 — and anyone could lock the `admin` name out). Through the HTTP API of both services:
 * 100 concurrent wrong passwords from one address get at most 10 answers that checked the password (401), the rest
 * 429; meanwhile and afterwards `admin` logs in from another address (the attacker locked out only itself).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startMonitor, ADMIN_PASSWORD, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, HARNESS_ADMIN_PW, type AgentHarness } from '../support/agent.harness.js';
import { certsFrom, postFrom } from '../support/https-client.kit.js';

let m: MonitorHarness;
let a: AgentHarness;

before(async () => {
  [m, a] = await Promise.all([startMonitor(), startAgent()]);
});
after(async () => {
  await m?.stop();
  await a?.close();
});

/** One login from a chosen loopback source address (the service sees it as the client address). */
async function loginFrom(
  url: string,
  dataDir: string,
  p: string,
  localAddress: string,
  username: string,
  password: string,
) {
  const certs = certsFrom(path.join(dataDir, 'certs'));
  return (await postFrom(url, certs, p, localAddress, { username, password })).status;
}

for (const svc of ['monitor', 'agent'] as const) {
  test(`${svc}: 100 concurrent guesses get at most 10 password checks, and admin still logs in elsewhere`, async () => {
    const [url, dataDir, p, pw] =
      svc === 'monitor'
        ? [m.url, m.dataDir, '/login', ADMIN_PASSWORD]
        : [a.url, a.dataDir, '/api/auth', HARNESS_ADMIN_PW];
    const attack = Promise.all(
      Array.from({ length: 100 }, (_, i) => loginFrom(url, dataDir, p, '127.0.0.66', 'admin', `guess-${i}`)),
    );
    const during = await loginFrom(url, dataDir, p, '127.0.0.77', 'admin', pw);
    const statuses = await attack;
    const checked = statuses.filter((s) => s === 401).length;
    const refused = statuses.filter((s) => s === 429).length;
    console.log(`${svc}: ${checked} password checks, ${refused} refused before checking`);
    assert.equal(checked + refused, 100, `only 401 and 429: ${statuses.join(',')}`);
    assert.ok(checked <= 10, `at most 10 password checks, got ${checked}`);
    assert.equal(during, 200, 'admin logs in from another address during the attack');
    assert.equal(await loginFrom(url, dataDir, p, '127.0.0.78', 'admin', pw), 200, 'and after it');
    assert.equal(await loginFrom(url, dataDir, p, '127.0.0.66', 'admin', pw), 429, 'the attacking address is blocked');
  });
}
