/**
 * `npm run restore -- <backup file> [--service monitor|agent] [--force]`: loads a backup (.mdb or .kvdump) into the
 * service's configured store (DATA_DIR / STORE_URL, as the service reads them). Refuses while the service answers on
 * its port, and refuses an existing store unless --force (an LMDB directory is then moved aside to
 * `<dir>.before-restore-<time>`, a PostgreSQL namespace dropped). The service is taken from the file name
 * (`agent-…` → agent, else monitor) unless --service says.
 */
import net from 'node:net';
import path from 'node:path';
import { readConfig, type ServiceName } from './core/config/env.js';
import { restoreStore } from './core/storage/backups.js';

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.setTimeout(2000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('timeout', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(false));
  });
}

async function main(argv: string[]): Promise<number> {
  const force = argv.includes('--force');
  const si = argv.indexOf('--service');
  const file = argv.find((a, i) => !a.startsWith('--') && (si < 0 || i !== si + 1));
  if (!file) {
    console.error('usage: npm run restore -- <backup file> [--service monitor|agent] [--force]');
    return 2;
  }
  const service = (
    si >= 0 ? argv[si + 1] : path.basename(file).startsWith('agent-') ? 'agent' : 'monitor'
  ) as ServiceName;
  if (service !== 'monitor' && service !== 'agent') {
    console.error('--service must be monitor or agent');
    return 2;
  }
  const cfg = readConfig(service);
  if (await answers(cfg.port)) {
    console.error(`the ${service} service answers on port ${cfg.port}: stop it before restoring`);
    return 1;
  }
  try {
    const r = await restoreStore(path.resolve(file), cfg.store, force);
    console.log(
      `restored ${file} into ${r.target}${r.entries !== undefined ? ` (${r.entries} entries)` : ''}` +
        (r.movedAside ? `; the previous store is in ${r.movedAside}` : ''),
    );
    return 0;
  } catch (e) {
    console.error(`restore refused: ${(e as Error).message}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
