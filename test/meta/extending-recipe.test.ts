/**
 * docs/extending.md's recipes, followed literally in a throw-away copy of the tree: the example monitor type (file)
 * and the example channel (gotify) are taken from the page's code blocks, written where the page says, and registered
 * with the one line the page gives (the type also gets its DBNAMES entry and the enum.dbnames format bump, as the page
 * says); nothing else is edited. Then, in the copy: the registry meta-test refuses the type
 * file before its registry line (it has teeth), tsc accepts the tree, the example tests, the registry, byte-table and
 * channel meta-tests pass, and a monitor service started from the copy creates and runs a `file` monitor through the
 * API and lists `/file/create` in its OpenAPI. The repository itself is never touched.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/extending.md'), 'utf8');
let tmp = '';

/** The ```ts block the page gives right after "`<file>`...:". */
function codeBlock(file: string): string {
  const esc = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp('`' + esc + '`[^\\n]*:\\n\\n```ts\\n([\\s\\S]*?)\\n```').exec(DOC);
  assert.ok(m, `docs/extending.md has no code block for ${file}`);
  return m[1]!;
}

/** Adds a registry block's imports after the file's last import and its entries before the list's end. */
function register(file: string, listEnd: RegExp): void {
  const lines = codeBlock(file).split('\n');
  const imports = lines.filter((l) => l.startsWith('import '));
  const entries = lines.filter((l) => {
    const t = l.trim();
    return t !== '' && !l.startsWith('import ') && !t.startsWith('//') && !/^export |^\]\)?;$/.test(t);
  });
  assert.ok(imports.length > 0 && entries.length === 1, `${file}: expected imports and one registry line`);
  const target = path.join(tmp, file);
  let src = fs.readFileSync(target, 'utf8');
  const lastImport = [...src.matchAll(/^import [^;]*;\n/gm)].at(-1)!;
  const at = lastImport.index + lastImport[0].length;
  src = src.slice(0, at) + imports.join('\n') + '\n' + src.slice(at);
  const end = listEnd.exec(src);
  assert.ok(end, `${file}: the list's end was not found`);
  src = src.slice(0, end.index) + '\n' + entries[0]!.replace(/^\s*/, '  ') + src.slice(end.index);
  fs.writeFileSync(target, src);
}

function write(file: string): void {
  fs.writeFileSync(path.join(tmp, file), codeBlock(file) + '\n');
}

/** Runs node (with tsx) in the copy; returns exit status and output. */
function node(args: string[]): { status: number | null; out: string } {
  // Without the parent's NODE_TEST_CONTEXT: a child `node --test` would otherwise report to us and exit 0.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const r = spawnSync(process.execPath, args, { cwd: tmp, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

const tail = (s: string) => s.split('\n').slice(-40).join('\n');

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'extending-recipe-'));
  for (const d of ['src', 'test', 'web']) fs.cpSync(path.join(ROOT, d), path.join(tmp, d), { recursive: true });
  for (const f of ['package.json', 'tsconfig.json']) fs.copyFileSync(path.join(ROOT, f), path.join(tmp, f));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tmp, 'node_modules'), 'dir');
});
after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a monitor type added as docs/extending.md says: its file, one registry line, one dbname, the format bump', () => {
  const TYPES = 'src/monitor/monitor-types';
  write(`${TYPES}/file.ts`);
  write(`${TYPES}/file.test.ts`);
  // Before its registry line, the meta-test refuses the file.
  const unregistered = node(['--import', 'tsx', '--test', `${TYPES}/registry.test.ts`]);
  assert.notEqual(unregistered.status, 0, 'registry.test.ts passed with an unregistered type file');
  register(`${TYPES}/registry.ts`, /\n {2}\]\);/);
  const typesFile = path.join(tmp, TYPES, 'types.ts');
  const types = fs.readFileSync(typesFile, 'utf8');
  const appended = types.replace(/(export const DBNAMES = \[[^\]]*?)(,?\s*\] as const)/, "$1, 'file'$2");
  assert.notEqual(appended, types, 'DBNAMES not found');
  fs.writeFileSync(typesFile, appended);
  const formatsFile = path.join(tmp, 'src/monitor/migrations.ts');
  const formats = fs.readFileSync(formatsFile, 'utf8');
  const bumped = formats.replace(/'enum\.dbnames': (\d+)/, (_m, n: string) => `'enum.dbnames': ${Number(n) + 1}`);
  assert.notEqual(bumped, formats, "MONITOR_FORMATS' enum.dbnames not found");
  fs.writeFileSync(formatsFile, bumped);

  const r = node(['--import', 'tsx', '--test', `${TYPES}/file.test.ts`, `${TYPES}/registry.test.ts`]);
  assert.equal(r.status, 0, tail(r.out));
  const tables = node(['--import', 'tsx', '--test', 'src/monitor/history/format-tables.test.ts']);
  assert.equal(tables.status, 0, tail(tables.out));
});

test('a channel added as docs/extending.md says: its file, its test, one registry line', () => {
  write('src/core/notify/channels/gotify.ts');
  write('src/core/notify/channels/gotify.test.ts');
  register('src/core/notify/registry.ts', /\n\];/);
  const r = node([
    '--import',
    'tsx',
    '--test',
    'src/core/notify/channels/gotify.test.ts',
    'test/meta/channels.test.ts',
  ]);
  assert.equal(r.status, 0, tail(r.out));
});

test('the copy with both plug-ins type-checks', () => {
  const r = node([path.join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'tsconfig.json']);
  assert.equal(r.status, 0, tail(r.out));
});

test('the service started from the copy creates, validates and runs a file monitor over the API', () => {
  const script = `
import fs from 'node:fs';
import path from 'node:path';
import { startMonitor } from './test/support/monitor.harness.js';
const h = await startMonitor();
try {
  const beat = path.join(h.dataDir, 'beat');
  fs.writeFileSync(beat, 'hello');
  const created = await h.admin.request('POST', '/file/create', { body: { name: 'beat', path: beat } });
  const relative = await h.admin.request('POST', '/file/create', { body: { name: 'rel', path: 'beat' } });
  const run = await h.admin.request('GET', '/monitor/run/beat/show');
  const doc = await h.admin.request('GET', '/docs/index.html/json', { token: null });
  console.log(JSON.stringify({
    created: created.status,
    relative: [relative.status, relative.body.field],
    run: [run.status, run.body.status, run.body.metrics?.sizeBytes],
    openapi: '/file/create' in doc.body.paths,
  }));
} finally {
  await h.stop();
}
`;
  fs.writeFileSync(path.join(tmp, 'recipe-api.ts'), script);
  const r = node(['--import', 'tsx', 'recipe-api.ts']);
  assert.equal(r.status, 0, tail(r.out));
  const last = r.out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  assert.deepEqual(JSON.parse(last ?? '{}'), {
    created: 201,
    relative: [400, 'body.path'],
    run: [200, 'OK', 5],
    openapi: true,
  });
});
