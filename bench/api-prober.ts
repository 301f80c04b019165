/**
 * The API probes of bench:scheduler, in a child process so the client's own work (TLS, parsing a 20 MB list) is not
 * counted as the service's CPU. Every `intervalMs` it times GET /monitors (the whole list, parsed), a filtered list,
 * a page of 100 and POST /login (argon2id), and prints one JSON line of milliseconds.
 * Args: baseUrl certDir username password intervalMs
 */
import { certsFrom, HttpsClient } from '../test/support/https-client.kit.js';

const [baseUrl, certDir, username, password, intervalArg] = process.argv.slice(2);
const intervalMs = Number(intervalArg ?? 10_000);

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return Math.round((performance.now() - t0) * 10) / 10;
}

async function main(): Promise<void> {
  const c = new HttpsClient(baseUrl!, certsFrom(certDir!));
  await c.login(username!, password!);
  process.stdout.write('ready\n');
  for (;;) {
    await new Promise((r) => setTimeout(r, intervalMs));
    const line = {
      monitors_list: await timed(() => c.request('GET', '/monitors')),
      monitors_filtered: await timed(() => c.request('GET', '/monitors?type=sys')),
      monitors_page: await timed(() => c.request('GET', '/monitors?offset=1000&limit=100')),
      login: await timed(() => c.request('POST', '/login', { body: { username, password }, token: null })),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
