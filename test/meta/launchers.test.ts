/**
 * Every launcher of a service passes it the same V8 tuning flags: the lists in src/start-all.ts (`npm start`) are the
 * source, and the npm scripts, the bin and the systemd units must carry exactly those (decisions 17, 117, 118, 172:
 * each was measured; a launcher that drifts runs a service nobody measured). bench:cluster's service processes read
 * the list itself (test/support/service-flags.kit.ts, decision 178): that is checked too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serviceFlags } from '../support/service-flags.kit.js';

const ROOT = path.resolve('.');
const read = (p: string): string => fs.readFileSync(path.join(ROOT, p), 'utf8');
type Service = 'monitor' | 'agent';
const START_ALL = serviceFlags(ROOT);

/** The V8 tuning flags in one launcher's text (those named in either start-all list), sorted. */
function tuning(text: string, names: ReadonlySet<string>): string[] {
  return [...text.matchAll(/--([a-z0-9-]+)(?:=\S+?)?(?=['"\s,]|$)/g)]
    .filter((m) => names.has(m[1]!))
    .map((m) => m[0])
    .sort();
}

const NAMES = new Set([...START_ALL.monitor, ...START_ALL.agent].map((f) => /^--([a-z0-9-]+)/.exec(f)![1]!));
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
const execStart = (unit: string): string => /^ExecStart=(.*)$/m.exec(read(unit))![1]!;

const LAUNCHERS: Record<Service, Array<[string, string]>> = {
  monitor: [
    ['npm run monitor', scripts.monitor!],
    ['npm run monitor:dev', scripts['monitor:dev']!],
    ['npm run bench:scheduler (the service in-process)', scripts['bench:scheduler']!],
    ['deploy/sentinel-monitor.service', execStart('deploy/sentinel-monitor.service')],
  ],
  agent: [
    ['npm run agent', scripts.agent!],
    ['npm run agent:dev', scripts['agent:dev']!],
    ['bin/discovery_agent.mjs', read('bin/discovery_agent.mjs').split('spawn(')[1] ?? ''],
    ['deploy/sentinel-agent.service', execStart('deploy/sentinel-agent.service')],
  ],
};

for (const svc of ['monitor', 'agent'] as const) {
  test(`every ${svc} launcher passes the flags of src/start-all.ts`, () => {
    const want = [...START_ALL[svc]].sort();
    assert.ok(want.length > 0);
    for (const [name, text] of LAUNCHERS[svc]) assert.deepEqual(tuning(text, NAMES), want, name);
  });
}

test("bench:cluster's service processes take the monitor's flags of src/start-all.ts", () => {
  const bench = read('bench/cluster.ts');
  assert.match(bench, /const MONITOR_FLAGS = serviceFlags\(ROOT\)\.monitor;/);
  const start = /async function startInstance[\s\S]*?\n}\n/.exec(bench)?.[0] ?? '';
  // The one argument list (build or tsx) begins with them, and no launcher flag is written by hand.
  assert.match(start, /const args = \[\.\.\.MONITOR_FLAGS,/);
  assert.deepEqual(tuning(start, NAMES), []);
});

test('the launcher check sees a drifted flag', () => {
  const want = [...START_ALL.monitor].sort();
  const drifted = 'node --max-semi-space-size=16 --enable-source-maps dist/monitor/main.js';
  assert.notDeepEqual(tuning(drifted, NAMES), want);
  assert.deepEqual(tuning(`node ${want.join(' ')} --enable-source-maps x.js`, NAMES), want);
});
