/**
 * The TypeScript files under a folder, recursively, for meta tests that read the source (import boundaries, test
 * registration).
 */
import fs from 'node:fs';
import path from 'node:path';

export function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}
