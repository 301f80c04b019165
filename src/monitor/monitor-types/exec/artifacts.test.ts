import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveArtifactPath, screenshotName } from './artifacts.js';

test('resolveArtifactPath stays inside the root', () => {
  assert.equal(resolveArtifactPath('/data/art/run1', 'step-01-a.png'), '/data/art/run1/step-01-a.png');
  assert.equal(resolveArtifactPath('/data/art', 'run1/video.webm'), '/data/art/run1/video.webm');
  for (const bad of ['../x', 'run1/../../x', '/etc/passwd', '', '.', 'a\0b', '..\\x', 'run1/../..']) {
    assert.equal(resolveArtifactPath('/data/art', bad), undefined, bad);
  }
});

test('screenshot names are numbered slugs', () => {
  assert.equal(screenshotName(2, 'Log in!'), 'step-03-log-in.png');
  assert.equal(screenshotName(0, '***', '-failure'), 'step-01-step-failure.png');
});
