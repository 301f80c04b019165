/**
 * A fresh PostgreSQL database per test file (PG_URL, default postgres://postgres@127.0.0.1:5432/test, names the
 * server): `CREATE DATABASE <prefix>_<run id>`, dropped (with its connections) by `drop()`. `unavailable` holds the
 * reason when the server cannot be reached; with CI=true the caller must fail, not skip.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

const serverUrl = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function createTestDatabase(prefix: string): Promise<TestDatabase | { unavailable: string }> {
  const name = `${prefix}_${Date.now().toString(36)}_${process.pid}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    return { unavailable: `PostgreSQL not usable at ${serverUrl}: ${(err as Error).message}` };
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Registers what a test file does without PostgreSQL: a failing test with CI=true, else a skip with the reason. */
export function reportUnavailable(reason: string): void {
  if (process.env.CI === 'true') it('PostgreSQL is reachable (required with CI=true)', () => assert.fail(reason));
  else it('PostgreSQL', { skip: reason }, () => undefined);
}
