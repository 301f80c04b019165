/**
 * The lazily built API docs: nothing of @fastify/swagger or @fastify/swagger-ui is loaded until the first /docs
 * request; then the OpenAPI document lists the app's routes (schemas and summaries as registered, hidden routes and
 * HEAD left out), the UI page and its assets are served (GET and HEAD), and a second request reuses the same build.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import Fastify from 'fastify';
import { installLazyDocs, openApiDocument } from './docs.js';

const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => /@fastify\/swagger/.test(f));

test('docs are built at the first /docs request and document the registered routes', async () => {
  const app = Fastify();
  installLazyDocs(app, { title: 'T', version: '1.2.3', description: 'D' });
  app.post(
    '/items/:name',
    {
      schema: {
        summary: 'Create an item',
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        body: { type: 'object', properties: { size: { type: 'string' } }, additionalProperties: false },
      },
    },
    async () => ({}),
  );
  app.get('/secret', { schema: { hide: true } }, async () => ({}));
  await app.ready();
  assert.deepEqual(loaded(), [], 'no swagger module loaded at start');

  const doc = (await openApiDocument(app)) as {
    openapi: string;
    info: { title: string; version: string };
    paths: Record<string, Record<string, { summary?: string; requestBody?: unknown }>>;
    components: { securitySchemes: Record<string, unknown> };
  };
  assert.ok(loaded().length > 0, 'loaded at the first request');
  assert.equal(doc.openapi, '3.0.3');
  assert.deepEqual(doc.info, { title: 'T', version: '1.2.3', description: 'D' });
  assert.ok(doc.components.securitySchemes.bearer);
  assert.deepEqual(Object.keys(doc.paths), ['/items/{name}']);
  assert.equal(doc.paths['/items/{name}']!.post!.summary, 'Create an item');
  assert.ok(doc.paths['/items/{name}']!.post!.requestBody);

  const page = await app.inject({ method: 'GET', url: '/docs/index.html' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /text\/html/);
  const assets = [...page.body.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(assets.length > 0, 'the page refers to its assets');
  for (const a of assets) {
    const r = await app.inject({ method: 'GET', url: `/docs/${a}` });
    assert.equal(r.statusCode, 200, a);
    const head = await app.inject({ method: 'HEAD', url: `/docs/${a}` });
    assert.equal(head.statusCode, 200, `HEAD ${a}`);
  }
  assert.equal((await app.inject({ method: 'GET', url: '/docs' })).statusCode < 400, true);
  assert.deepEqual(await openApiDocument(app), doc, 'the same document on a second request');
  await app.close();
});
