#!/usr/bin/env node
// The `sentinel` command-line client (docs/cli.md): the compiled build when there is one (dist/, made by `npm install`
// / `npm run build`), else — or with SENTINEL_CLI_SOURCE=1, as the CLI's own tests run it so they test the sources and
// never a stale build — the TypeScript sources through tsx's loader in this same process.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('../dist/cli/cli.js', import.meta.url);
if (process.env.SENTINEL_CLI_SOURCE !== '1' && fs.existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/cli.ts', import.meta.url).href);
}
