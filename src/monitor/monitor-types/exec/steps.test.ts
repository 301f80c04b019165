import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../../core/errors.js';
import { parseExecConfig } from './config.js';
import { parseSteps } from './steps.js';

const go = { action: 'goto', url: 'https://example.test/' };

function rejects(input: unknown, re: RegExp): void {
  assert.throws(
    () => parseSteps(input),
    (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.code, 'VALIDATION');
      assert.equal(e.field, 'steps');
      assert.match(e.message, re);
      return true;
    },
  );
}

test('accepts a JSON string and a real array, naming unnamed steps', () => {
  const arr = [go, { action: 'click', selector: 'text=Sign in' }];
  const a = parseSteps(JSON.stringify(arr));
  const b = parseSteps(arr);
  assert.deepEqual(a, b);
  assert.equal(a[1]!.name, '2. click');
});

test('unknown action and missing selector name the step index and name', () => {
  rejects([go, { name: 'log in', action: 'clik', selector: '#a' }], /steps\[1\] \("log in"\): unknown action "clik"/);
  rejects([go, { action: 'fill', value: 'x' }], /steps\[1\] \("2\. fill"\): action "fill" needs a "selector"/);
  rejects([go, { action: 'assertVisible' }], /needs a "selector"/);
  rejects([go, { action: 'totp', selector: '#c' }], /needs a "secret"/);
  rejects([go, { action: 'waitFor' }], /exactly one of/);
  rejects([go, { action: 'waitFor', selector: '#a', text: 'b' }], /exactly one of/);
  rejects([go, { action: 'assertText', selector: '#a', pattern: '(' }], /not a usable regular expression/);
  rejects([go, { action: 'assertUrl', pattern: '^(a)\\1$' }], /backreferences .* cannot run in linear time/);
  rejects([go, { action: 'sleep', ms: 60_000 }], /"ms" must be an integer between 0 and 30000/);
  rejects([go, { action: 'click', selector: '#a', bogus: 1 }], /unknown field "bogus"/);
});

test('only http(s) URLs', () => {
  for (const url of [
    'file:///etc/passwd',
    'chrome://settings',
    'view-source:https://a.test',
    'javascript:alert(1)',
    'data:text/html,hi',
    'about:blank',
  ]) {
    rejects([{ name: 'open', action: 'goto', url }], /steps\[0\] \("open"\): scheme ".*" is not allowed/);
  }
  rejects([{ action: 'goto', url: '/relative' }], /not an absolute URL/);
  rejects([{ action: 'click', selector: '#a' }], /first step must be "goto"/);
});

test('references only in value, and well formed', () => {
  parseSteps([go, { action: 'fill', selector: '#p', value: '{{vault:secret/app/db#password}}' }]);
  parseSteps([go, { action: 'fill', selector: '#p', value: 'pre-{{secret:pw}}-{{totp:mfa}}' }]);
  rejects([go, { action: 'fill', selector: '#p', value: '{{vault:secret#password}}' }], /bad reference/);
  rejects([go, { action: 'fill', selector: '#p', value: '{{vault:secret/app}}' }], /bad reference/);
  rejects([go, { action: 'fill', selector: '#p', value: '{{env:HOME}}' }], /bad reference/);
  rejects([go, { action: 'fill', selector: '#p', value: '{{secret:pw' }], /bad reference/);
  rejects([{ action: 'goto', url: 'https://a.test/?k={{secret:pw}}' }], /only allowed in "value"/);
});

test('malformed input', () => {
  rejects('not json', /not valid JSON/);
  rejects('{}', /expected an array/);
  rejects('[]', /at least one step/);
  rejects([go, 'click'], /steps\[1\]: must be an object/);
});

test('config fields: browser, viewport, device, artifacts, booleans', () => {
  const steps = JSON.stringify([go]);
  const o = parseExecConfig({ name: 'm', steps });
  assert.equal(o.browser, 'chromium');
  assert.deepEqual(o.viewport, { width: 1280, height: 720 });
  assert.equal(o.artifacts, 'on-failure');
  assert.equal(o.video, false);
  assert.equal(o.har, true);
  assert.equal(parseExecConfig({ name: 'm', steps, device: 'iPhone 13' }).device?.isMobile, true);
  const bad: [Record<string, string>, string][] = [
    [{ browser: 'webkit' }, 'browser'],
    [{ viewport: '10x10' }, 'viewport'],
    [{ device: 'Nokia 3310' }, 'device'],
    [{ artifacts: 'sometimes' }, 'artifacts'],
    [{ video: 'yes' }, 'video'],
    [{ steps: '' }, 'steps'],
  ];
  for (const [extra, field] of bad) {
    assert.throws(
      () => parseExecConfig({ name: 'm', steps, ...extra }),
      (e: unknown) => e instanceof AppError && e.field === field,
    );
  }
});
