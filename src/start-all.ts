/**
 * `npm start`: one supervisor process plus one process per service (a crash in one never takes the other down),
 * sharing DATA_DIR. Compiled (dist/start-all.js, the default) it runs dist/<service>/main.js with plain node; run
 * from source (`npm run start:dev`, tsx) it runs src/<service>/main.ts through tsx's loader. SIGINT/SIGTERM are
 * forwarded to both services and the supervisor exits when they have exited (a second signal, SIGNAL_REPEAT_MS or
 * more after the first, stops them at once; a repeat sooner is the same request delivered twice, e.g. by npm and the
 * terminal's process group). If one service exits, the other is stopped and the exit code passed on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { SERVICE_UMASK } from './core/platform/file-modes.js';
import { stopSignals } from './core/platform/run-main.js';

// Both children set it themselves (run-main.ts); set here too so nothing this launcher creates is readable by others.
process.umask(SERVICE_UMASK);
const self = fileURLToPath(import.meta.url);
const here = path.dirname(self);
const fromSource = self.endsWith('.ts');
const children: ChildProcess[] = [];
const classify = stopSignals();
let exitCode = 0;

function waitAll(): void {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  void Promise.all(running.map((c) => new Promise((r) => c.once('exit', r)))).then(() => process.exit(exitCode));
}

function stopAll(code: number, sig: NodeJS.Signals = 'SIGTERM'): void {
  const kind = classify();
  // A repeat within SIGNAL_REPEAT_MS is the first one delivered twice (npm forwards the signal the process group also
  // got): nothing to do. A later one: the services stop at once (they treat a second SIGTERM the same way).
  if (kind === 'duplicate') return;
  if (kind === 'force') {
    for (const c of children) if (c.exitCode === null) c.kill(sig);
    return;
  }
  exitCode = code;
  for (const c of children) if (c.exitCode === null) c.kill(sig);
  waitAll();
}

// Young-generation sizes measured per service (docs/decisions.md): the agent's small one saves ~40 MB RSS at no
// measurable CPU cost; the monitor's larger one promotes less per-check garbage (~12 % fewer CPU-seconds per check).
// The agent's 1 MB semi-spaces and one V8 helper thread (--v8-pool-size=1) leave ≈ 2 + 3 MB less idle RSS, CPU not
// worse (decisions 117, 118).
// bench/start.ts reads these lists from here.
const NODE_FLAGS: Record<string, string[]> = {
  monitor: ['--max-semi-space-size=32'],
  agent: ['--max-semi-space-size=1', '--v8-pool-size=1'],
};
const loader = fromSource ? ['--import', 'tsx'] : ['--enable-source-maps'];
for (const svc of ['monitor', 'agent']) {
  const main = path.join(here, svc, fromSource ? 'main.ts' : 'main.js');
  const child = spawn(process.execPath, [...NODE_FLAGS[svc]!, ...loader, main], { stdio: 'inherit', env: process.env });
  child.on('exit', (code) => stopAll(code ?? 1));
  children.push(child);
}
process.on('SIGINT', () => stopAll(0, 'SIGINT'));
process.on('SIGTERM', () => stopAll(0, 'SIGTERM'));
