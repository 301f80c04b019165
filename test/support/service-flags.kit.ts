/**
 * The services' Node flags as `npm start` passes them: NODE_FLAGS in <root>/src/start-all.ts, read from the source so
 * a bench can take each build's own (bench/start.ts builds other revisions) and the launcher meta test can hold every
 * other launcher to them (test/meta/launchers.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

export type ServiceFlags = Record<'monitor' | 'agent', string[]>;

export function serviceFlags(root: string): ServiceFlags {
  const src = fs.readFileSync(path.join(root, 'src', 'start-all.ts'), 'utf8');
  const list = (svc: string) => {
    const m = new RegExp(`\\b${svc}: \\[([^\\]]*)\\]`).exec(src);
    if (!m) throw new Error(`no ${svc} flags in ${root}/src/start-all.ts`);
    return [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
  };
  return { monitor: list('monitor'), agent: list('agent') };
}
