import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { resolveTemplates, SecretMasker, TemplateError, type TemplateSources } from './templates.js';
import { totpFromSeed } from './totp.js';
import { toPuppeteerSelector } from './session.js';

const sources: TemplateSources = {
  secret: async (n) => (n === 'pw' ? 'p@ss word&1' : undefined),
  vault: async (path, key) => `${path}:${key}`,
  totp: async () => '123456',
};

test('resolves every kind and registers values with the masker', async () => {
  const m = new SecretMasker();
  const out = await resolveTemplates('u={{vault:secret/app#user}} p={{secret:pw}} c={{ totp:mfa }}', sources, m);
  assert.equal(out, 'u=secret/app:user p=p@ss word&1 c=123456');
  assert.equal(
    m.mask('failed with p@ss word&1 and p%40ss%20word%261 and p%40ss+word%261 code 123456'),
    'failed with *** and *** and *** code ***',
  );
});

test('a missing secret is a TemplateError without the value', async () => {
  await assert.rejects(
    resolveTemplates('{{secret:nope}}', sources, new SecretMasker()),
    (e: unknown) => e instanceof TemplateError && /"nope" is not in the secret store/.test(e.message),
  );
});

test('TOTP from a base32 seed and from an otpauth URI match otpauth', () => {
  const secret = new OTPAuth.Secret({ size: 20 });
  const t = 1_700_000_000_000;
  const ref = new OTPAuth.TOTP({ secret }).generate({ timestamp: t });
  assert.equal(totpFromSeed(secret.base32, t), ref);
  assert.equal(totpFromSeed(secret.base32.toLowerCase().replace(/(.{4})/g, '$1 '), t), ref);
  const uri = new OTPAuth.TOTP({ secret, digits: 8, period: 60, algorithm: 'SHA256', issuer: 'x', label: 'y' });
  assert.equal(totpFromSeed(uri.toString(), t), uri.generate({ timestamp: t }));
  assert.throws(() => totpFromSeed('otpauth://hotp/x?secret=AAAA&counter=1'), TemplateError);
  assert.throws(
    () => totpFromSeed('not base32 !!!'),
    (e: unknown) => e instanceof TemplateError && !e.message.includes('!!!'),
  );
});

test('Playwright selectors translate to puppeteer P-selectors', () => {
  assert.equal(toPuppeteerSelector('#a > b'), '#a > b');
  assert.equal(toPuppeteerSelector('css=.x'), '.x');
  assert.equal(toPuppeteerSelector('text=Sign in'), '::-p-text(Sign in)');
  assert.equal(toPuppeteerSelector('text="Sign in"'), '::-p-text(Sign in)');
  assert.equal(toPuppeteerSelector('role=button[name="Sign in"]'), '::-p-aria([name="Sign in"][role="button"])');
  assert.equal(toPuppeteerSelector('role=link'), '::-p-aria([role="link"])');
  assert.equal(toPuppeteerSelector('//div[@id="a"]'), '::-p-xpath(//div[@id="a"])');
});
