import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { probeSmtp } from './smtp-probe.js';

test('a server that accepts but never greets: the probe ends at its timeout with the reason', async () => {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const r = await probeSmtp(
      { smtpHost: '127.0.0.1', smtpPort: String(port), smtpSecure: 'none' },
      { timeoutMs: 300 },
    );
    assert.equal(r.ok, false);
    assert.equal(r.connected, true);
    assert.match(r.error ?? '', /no answer within 300 ms/);
    assert.match(r.willUse, /^nothing: /);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('a server that does not speak SMTP is reported, not thrown', async () => {
  const server = net.createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const r = await probeSmtp(
      { smtpHost: '127.0.0.1', smtpPort: String(port), smtpSecure: 'none' },
      { timeoutMs: 2000 },
    );
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /not an SMTP reply/);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
