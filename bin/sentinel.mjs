#!/usr/bin/env node
// The `sentinel` command-line client (docs/cli.md): the compiled build when there is one (dist/), else the
// TypeScript sources through tsx's loader in this same process.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('../dist/cli/cli.js', import.meta.url);
if (fs.existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/cli.ts', import.meta.url).href);
}
