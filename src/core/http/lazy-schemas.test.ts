/**
 * Route schemas compiled at first use behave as Fastify's own: a bad body is refused with Ajv's errors (also on the
 * first request and on later ones), a good one passes with Ajv's root changes, and a response is serialised with its
 * schema (undeclared properties dropped); nothing compiles, and no Ajv instance exists, while the app gets ready.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { serializersOnFirstUse, validatorsOnFirstUse } from './lazy-schemas.js';

function makeApp(lazy: boolean, compiled: string[]) {
  const app = Fastify({
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, useDefaults: false },
      onCreate: (ajv) => {
        compiled.push('ajv');
        const compile = ajv.compile.bind(ajv);
        ajv.compile = ((s: Parameters<typeof compile>[0]) => (
          compiled.push('validator'),
          compile(s)
        )) as typeof compile;
      },
    },
    ...(lazy
      ? {
          schemaController: {
            compilersFactory: { buildValidator: validatorsOnFirstUse, buildSerializer: serializersOnFirstUse },
          },
        }
      : {}),
  });
  app.post(
    '/echo',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', maxLength: 5 } },
          additionalProperties: false,
        },
        querystring: { type: 'object', properties: { n: { type: 'string' } } },
        response: { 200: { type: 'object', properties: { name: { type: 'string' } } } },
      },
    },
    async (req) => ({ ...(req.body as object), secret: 'not in the schema' }),
  );
  return app;
}

test('lazy and eager compilation answer alike; the lazy app compiles nothing until the first request', async () => {
  const answers: Array<Array<{ status: number; body: string }>> = [];
  for (const lazy of [false, true]) {
    const compiled: string[] = [];
    const app = makeApp(lazy, compiled);
    await app.ready();
    if (lazy) assert.deepEqual(compiled, [], 'no Ajv instance and nothing compiled at ready');
    else assert.ok(compiled.length > 0, 'Fastify compiles eagerly by default');
    const out = [];
    for (const payload of [{ name: 'toolongname' }, { name: 'ok' }, {}, { name: 'ok', extra: 1 }, { name: 'ok' }]) {
      const r = await app.inject({ method: 'POST', url: '/echo?n=1', payload });
      out.push({ status: r.statusCode, body: r.body });
    }
    answers.push(out);
    assert.equal(compiled.filter((c) => c === 'ajv').length, 1, 'one Ajv instance, with the onCreate hook run');
    await app.close();
  }
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(
    answers[0]!.map((a) => a.status),
    [400, 200, 400, 400, 200],
  );
  assert.equal(answers[0]![1]!.body, '{"name":"ok"}', 'the response schema drops undeclared properties');
  assert.match(answers[0]![0]!.body, /must NOT have more than 5 characters/);
});
