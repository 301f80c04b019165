/**
 * Issue 14 §1's proof, on both real services: the served OpenAPI document is valid OpenAPI 3 (a standard validator
 * from npm), every route declares a 2xx response, and one valid request per route, built from the document alone
 * (openapi.kit.ts), gets an answer whose status is declared and whose JSON body matches the schema declared for it.
 * Creates run first and deletes last so that most requests reach their success answer; the count is printed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, HARNESS_ADMIN_PW, type AgentHarness } from '../support/agent.harness.js';
import type { HttpsClient } from '../support/https-client.kit.js';
import { operations, requestBody, requestUrl, responseValidator, type Operation } from './openapi.kit.js';

let m: MonitorHarness;
let a: AgentHarness;

before(async () => {
  [m, a] = await Promise.all([startMonitor(), startAgent()]);
});
after(async () => {
  await Promise.all([m?.stop(), a?.close()]);
});

/** Creates first, reads, then changes, deletes, and what ends sessions or wipes data last. */
function rank(op: Operation): number {
  if (/^\/(reinitDatabase|refresh_token|reloadCertificates)$/.test(op.path)) return 5;
  if (op.method === 'DELETE') return 4;
  if (op.method === 'POST' && (/\/create$/.test(op.path) || op.path === '/api/users')) return 0;
  if (op.method === 'GET') return 1;
  return 2;
}

async function loadDocument(client: HttpsClient) {
  const r = await client.request('GET', '/docs/index.html/json', { token: null });
  assert.equal(r.status, 200);
  const validator = new Validator();
  const res = await validator.validate(structuredClone(r.body));
  assert.ok(res.valid, `OpenAPI document invalid: ${String(JSON.stringify(res.errors)).slice(0, 2000)}`);
  return r.body;
}

async function prove(client: HttpsClient, fresh: () => Promise<string>) {
  const doc = await loadDocument(client);
  const ops = operations(doc).sort((x, y) => rank(x) - rank(y));
  const compile = responseValidator();
  const problems: string[] = [];
  let ok2xx = 0;
  const other: string[] = [];
  for (const op of ops) {
    const label = `${op.method} ${op.path}`;
    if (!Object.keys(op.responses).some((c) => /^2/.test(c))) problems.push(`${label}: no 2xx response declared`);
    const url = requestUrl(op);
    const body = requestBody(op);
    // A refresh may rotate the token: use one of its own.
    const token = op.path === '/refresh_token' ? await fresh() : undefined;
    const r = await client.request(op.method, url, { body, ...(token ? { token } : {}) });
    const declared = op.responses[String(r.status)] ?? op.responses.default;
    if (!declared) {
      problems.push(`${label} → ${r.status} not declared: ${r.text.slice(0, 200)}`);
      continue;
    }
    if (r.status >= 200 && r.status < 300) ok2xx++;
    else other.push(`${label} → ${r.status} ${r.body?.message ?? ''}`);
    const type = String(r.headers['content-type'] ?? '').split(';')[0]!;
    const content = declared.content;
    if (!content) continue;
    if (!content[type]) {
      problems.push(`${label} → ${r.status} ${type} not among ${Object.keys(content).join(', ')}`);
      continue;
    }
    const schema = content[type].schema;
    if (type !== 'application/json' || !schema) continue;
    const validate = compile(schema);
    if (!validate(r.body))
      problems.push(
        `${label} → ${r.status}: ${JSON.stringify(validate.errors).slice(0, 400)} in ${r.text.slice(0, 200)}`,
      );
  }
  console.log(`# ${doc.info.title}: ${ops.length} routes, ${ok2xx} answered 2xx; the others:\n# ${other.join('\n# ')}`);
  assert.deepEqual(problems, []);
  return { total: ops.length, ok2xx };
}

test('monitor service: the served OpenAPI document is valid and every route answers as it declares', async () => {
  const { total, ok2xx } = await prove(m.admin, () => m.client().login('admin', 'admin-pass-123'));
  assert.ok(ok2xx >= total * 0.35, `${ok2xx} of ${total} routes answered 2xx`);
});

test('agent: the served OpenAPI document is valid and every route answers as it declares', async () => {
  const { total, ok2xx } = await prove(a.admin, async () => {
    const r = await a.admin.request('POST', '/api/auth', {
      body: { username: 'admin', password: HARNESS_ADMIN_PW },
      token: null,
    });
    return r.body.token as string;
  });
  assert.ok(ok2xx >= total * 0.6, `${ok2xx} of ${total} routes answered 2xx`);
});
