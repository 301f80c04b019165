/**
 * What the PostgreSQL tests of cluster alerting share: a namespace on the test database opened once (or the reason it
 * is unavailable), a webhook receiver with its TLS, and the teardown of the stores they opened (each store object
 * stands for one cluster member).
 */
import { after, before } from 'node:test';
import pino from 'pino';
import { dropPostgresNamespace, openPostgresStore, type PostgresStore } from '../../core/storage/postgres-store.js';
import {
  type TestTls,
  type WebhookReceiver,
  makeTestTls,
  startWebhookReceiver,
} from '../../../test/support/webhook-receivers.fixture.js';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const silentLog = pino({ level: 'silent' });
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface PgAlertingKit {
  namespace: string;
  /** The first store of the namespace (its first member). */
  store: PostgresStore;
  /** Another store object on the namespace: another member; closed after the tests. */
  peer(): Promise<PostgresStore>;
  /** Set once `before` ran. */
  tls: TestTls;
  hook: WebhookReceiver;
}

/** Opens the namespace `tag` names; registers before/after hooks for the receiver and the teardown. */
export async function pgAlertingKit(tag: string): Promise<PgAlertingKit | Error> {
  const namespace = `t${Date.now().toString(36)}_${process.pid}_${tag}`;
  const first = await openPostgresStore({ url: PG_URL, namespace }).catch((err: Error) => err);
  if (first instanceof Error) return first;
  const stores: PostgresStore[] = [first];
  const kit: PgAlertingKit = {
    namespace,
    store: first,
    async peer() {
      const s = await openPostgresStore({ url: PG_URL, namespace });
      stores.push(s);
      return s;
    },
    tls: undefined as unknown as TestTls,
    hook: undefined as unknown as WebhookReceiver,
  };
  before(async () => {
    kit.tls = makeTestTls();
    kit.hook = await startWebhookReceiver(kit.tls);
  });
  after(async () => {
    for (const s of stores) await s.close();
    await dropPostgresNamespace(PG_URL, namespace);
    await kit.hook.close();
    kit.tls.agent.destroy();
  });
  return kit;
}
