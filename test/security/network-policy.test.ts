/**
 * docs/security.md §5 (review F5): one network policy for every socket. Through the HTTP API as a `user`, with the
 * admin's networkDeny = 127.0.0.0/8: every type that opens a socket — tcp, db (postgres, mysql, mssql), snmp,
 * nslookup's dnsServer, ping, url, api, exec — aimed at 127.0.0.1, 0.0.0.0, [::] (unspecified addresses reach this
 * host) and `localhost` ends EXCEPTION naming the network policy, and the listeners behind those addresses (TCP, UDP,
 * HTTP, all dual-stack on ::) see no connection and no datagram. Before the fix tcp/db/snmp/nslookup/ping ignored the
 * policy, and 0.0.0.0 / [::] went through url/api/exec. In the browser a WebSocket (and a fetch, an <img>) to a
 * denied address is blocked too (before: the WebSocket connected). With the default policy loopback is allowed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import http from 'node:http';
import dgram from 'node:dgram';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { userClient } from '../support/api.kit.js';
import { startBrowserSite, type BrowserSite } from '../support/browser-site.fixture.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const noChromium = !fs.existsSync('/usr/bin/chromium');
let h: MonitorHarness;
let site: BrowserSite;
let bob: HttpsClient;
/** Everything that reached a listener: "tcp", "http GET /x", "udp", "ws /x". */
const seen: string[] = [];
let tcpPort: number;
let httpPort: number;
let udpPort: number;
const closers: (() => void)[] = [];

async function listeners(): Promise<void> {
  const tcp = net.createServer((s) => (seen.push('tcp'), s.destroy()));
  await new Promise<void>((r) => tcp.listen(0, '::', r));
  tcpPort = (tcp.address() as AddressInfo).port;
  const web = http.createServer((req, res) => (seen.push(`http ${req.method} ${req.url}`), res.end('ok')));
  web.on('upgrade', (req, socket) => (seen.push(`ws ${req.url}`), socket.destroy()));
  await new Promise<void>((r) => web.listen(0, '::', r));
  httpPort = (web.address() as AddressInfo).port;
  const udp = dgram.createSocket({ type: 'udp6', ipv6Only: false });
  udp.on('message', () => seen.push('udp'));
  await new Promise<void>((r) => udp.bind(0, '::', r));
  udpPort = udp.address().port;
  closers.push(
    () => tcp.close(),
    () => (web.closeAllConnections(), web.close()),
    () => udp.close(),
  );
}

before(async () => {
  [h, site] = await Promise.all([startMonitor(), startBrowserSite(), listeners()]);
  bob = await userClient(h, 'bob', 'user', 'Bob-pass-1234');
});
after(async () => {
  await h?.stop();
  await site?.close();
  for (const c of closers) c();
});

async function setDeny(value: string): Promise<void> {
  const r = await h.admin.request('POST', '/updateSetting', { body: { networkDeny: value } });
  assert.equal(r.status, 200, r.text);
}

/** Creates the monitor as bob, runs it, returns the result. */
async function run(
  type: string,
  name: string,
  fields: Record<string, string>,
): Promise<{ status: string; message: string }> {
  const c = await bob.request('POST', `/${type}/create`, {
    body: { name, sched: '60MIN', state: 'off', timeout: '5', ...fields },
  });
  assert.equal(c.status, 201, `${name}: ${c.text}`);
  const r = await bob.request('GET', `/monitor/run/${name}/show`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

const TARGETS = [
  ['v4', '127.0.0.1', '127.0.0.1'],
  ['any4', '0.0.0.0', '0.0.0.0'],
  ['any6', '::', '[::]'],
  ['name', 'localhost', 'localhost'],
] as const;

function cases(bare: string, url: string): [string, string, Record<string, string>][] {
  const web = `http://${url}:${httpPort}/policy`;
  const db = (dbType: string) => ({
    dbType,
    dbIp: bare,
    dbPort: String(tcpPort),
    dbUser: 'u',
    dbPwd: 'p',
    dbDb: 'd',
    query: 'SELECT 1',
  });
  return [
    ['tcp', 'tcp', { ip: bare, port: String(tcpPort) }],
    ['db', 'pg', db('postgres')],
    ['db', 'my', db('mysql')],
    ['db', 'ms', db('mssql')],
    [
      'snmp',
      'snmp',
      { ip: bare, port: String(udpPort), version: 'v2c', community: 'public', snmpOid: '1.3.6.1.2.1.1.5.0' },
    ],
    [
      'nslookup',
      'dns',
      { domain: 'www.lab.test', recordType: 'A', dnsServer: `${bare.includes(':') ? `[${bare}]` : bare}:${udpPort}` },
    ],
    ['ping', 'ping', { ip: bare }],
    ['url', 'url', { url: web, display_name: 'u', probe: 'p' }],
    ['api', 'api', { api: web, typeApi: 'GET' }],
  ];
}

test('with 127.0.0.0/8 denied every socket type refuses 127.0.0.1, 0.0.0.0, [::] and localhost', async () => {
  await setDeny('127.0.0.0/8');
  const failures: string[] = [];
  for (const [label, bare, url] of TARGETS) {
    for (const [type, short, fields] of cases(bare, url)) {
      const r = await run(type, `np-${short}-${label}`, fields);
      if (r.status !== 'EXCEPTION' || !/network policy/.test(r.message))
        failures.push(`${short} → ${bare}: ${r.status} ${r.message}`);
    }
  }
  assert.deepEqual(failures, [], 'every run is a policy EXCEPTION');
  assert.deepEqual(seen, [], 'no listener saw a connection or a datagram');
});

test(
  'exec: pages, WebSockets, fetches and images to a denied address are blocked',
  { skip: noChromium && 'no chromium' },
  async () => {
    await setDeny('127.0.0.0/8');
    for (const [label, , url] of TARGETS) {
      const steps = [{ name: 'open', action: 'goto', url: `http://${url}:${httpPort}/exec-page` }];
      const r = await run('exec', `np-exec-${label}`, { steps: JSON.stringify(steps), timeout: '30' });
      assert.equal(r.status, 'EXCEPTION', `${url}: ${r.message}`);
      assert.match(r.message, /network policy denied/);
    }
    // The page itself is allowed (127.0.0.1), its WebSocket, fetch and image go to [::1], which is denied.
    await setDeny('::1/128');
    const steps = [
      {
        name: 'open',
        action: 'goto',
        url: `${site.url}/ws?to=${encodeURIComponent(`ws://[::1]:${httpPort}/ws-bypass`)}`,
      },
      { name: 'settled', action: 'assertText', selector: '#ws', text: 'ws ' },
    ];
    const r = await run('exec', 'np-exec-ws', { steps: JSON.stringify(steps), timeout: '30' });
    assert.equal(r.status, 'OK', r.message);
    assert.deepEqual(seen, [], 'the WebSocket, the fetch and the image never arrived');
  },
);

test('with the default policy loopback stays reachable (the policy is a fence, not a ban)', async () => {
  await setDeny('169.254.169.254/32');
  const r = await run('tcp', 'np-open-tcp', { ip: '127.0.0.1', port: String(tcpPort) });
  assert.equal(r.status, 'OK', r.message);
  const u = await run('url', 'np-open-url', { url: `http://0.0.0.0:${httpPort}/open`, display_name: 'u', probe: 'p' });
  assert.equal(u.status, 'OK', u.message);
  seen.length = 0;
});
