import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import { installErrorHandling, toErrorBody } from './error-handler.js';

test('toErrorBody: AppError keeps its status, code, field and Retry-After', () => {
  const r = toErrorBody(new AppError('TOO_MANY_REQUESTS', 'slow down', { retryAfterS: 7 }));
  assert.deepEqual(r, {
    status: 429,
    body: { code: 429, error: 'TOO_MANY_REQUESTS', message: 'slow down' },
    retryAfterS: 7,
  });
  assert.deepEqual(toErrorBody(AppError.badRequest('bad port', 'body.port')).body, {
    code: 400,
    error: 'VALIDATION',
    message: 'bad port',
    field: 'body.port',
  });
});

test('toErrorBody: anything else is a 500 that never echoes the original message', () => {
  const r = toErrorBody(new Error('secret internal detail at /srv/x.ts:1:2'));
  assert.equal(r.status, 500);
  assert.equal(r.body.message, 'internal server error');
  assert.equal(toErrorBody(undefined).status, 500);
  assert.equal(toErrorBody('a string').status, 500);
});

async function app() {
  const a = Fastify({
    logger: false,
    bodyLimit: 100,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  });
  installErrorHandling(a);
  a.post(
    '/x',
    {
      schema: {
        body: Type.Object(
          { port: Type.String({ pattern: '^\\d+$' }), mode: Type.Optional(Type.String({ enum: ['a', 'b'] })) },
          { additionalProperties: false },
        ),
      },
    },
    async () => ({ ok: true }),
  );
  a.get('/boom', async () => {
    throw new Error('database password is hunter2');
  });
  a.get('/app', async () => {
    throw AppError.conflict('exists');
  });
  await a.ready();
  return a;
}

test('Fastify errors map to the one body: validation names the field, bad JSON 400, 413, 415, 404, 500', async () => {
  const a = await app();
  const post = (payload: string, ct = 'application/json') =>
    a.inject({ method: 'POST', url: '/x', payload, headers: { 'content-type': ct } });
  let r = await post('{"port":"x"}');
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().field, 'body.port');
  assert.match(r.json().message, /^body\.port /);
  r = await post('{}');
  assert.equal(r.json().field, 'body.port', 'a missing property is named');
  r = await post('{"port":"1","other":"1"}');
  assert.equal(r.json().field, 'body.other');
  assert.match(r.json().message, /not a known field/);
  r = await post('{"port":"1","mode":"c"}');
  assert.match(r.json().message, /a, b/, 'allowed values are listed');
  r = await post('{"port":');
  assert.deepEqual([r.statusCode, r.json().error], [400, 'BAD_REQUEST']);
  r = await post(JSON.stringify({ port: '1'.repeat(200) }));
  assert.deepEqual([r.statusCode, r.json().error], [413, 'PAYLOAD_TOO_LARGE']);
  r = await post('<x/>', 'application/xml');
  assert.deepEqual([r.statusCode, r.json().error], [415, 'UNSUPPORTED_MEDIA_TYPE']);
  r = await a.inject({ method: 'GET', url: '/nope?q=1' });
  assert.deepEqual(r.json(), { code: 404, error: 'NOT_FOUND', message: 'route GET /nope not found' });
  r = await a.inject({ method: 'GET', url: '/boom' });
  assert.deepEqual(r.json(), { code: 500, error: 'INTERNAL', message: 'internal server error' });
  assert.ok(!r.body.includes('hunter2'));
  r = await a.inject({ method: 'GET', url: '/app' });
  assert.deepEqual(r.json(), { code: 409, error: 'CONFLICT', message: 'exists' });
  await a.close();
});
