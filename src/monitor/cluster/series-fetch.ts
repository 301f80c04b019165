/**
 * A member's read of a monitor's recent history when another member holds it (docs/cluster.md "History"). A member
 * keeps the rows of the series it holds only; a read that needs another's rows of the hours not compacted yet used to
 * read every writer's WAL records of those hours (seconds at 100,000 monitors, and growing through the hour). Now it
 * asks the holder, which has them in memory: GET /cluster/series/{dbname}/{name} on the holder's address
 * (cluster_members), signed as a member's request (core/auth/peer-proof.ts: the route takes no user's token) over
 * mutual TLS. The answer is the rows as one WAL record (history-wal.ts's encoding), base64. When no other live member
 * holds the series, the holder cannot be reached in time, or answers that it does not hold it (a handover), the
 * reader falls back to the WAL (history.service.ts `complete`).
 */
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { decodeWalRecord, encodeWalRecord } from '../history/history-wal.js';
import type { RawRow } from '../history/result-codec.js';
import type { DbName } from '../history/types.js';
import type { ClusterClient } from './cluster-client.js';

export interface SeriesRowsAnswer {
  /** The rows, base64 of one WAL record (history-wal.ts `encodeWalRecord`). */
  rows: string;
  count: number;
}

export const seriesPath = (db: DbName, name: string): string =>
  `/cluster/series/${encodeURIComponent(db)}/${encodeURIComponent(name)}`;

/** The holder's side: its rows of the series, or 409 when this instance does not hold it. */
export async function seriesRows(
  openRows: (db: DbName, name: string) => Promise<RawRow[] | undefined>,
  db: DbName,
  name: string,
): Promise<SeriesRowsAnswer> {
  const rows = await openRows(db, name);
  if (!rows) throw AppError.conflict(`this instance does not hold ${name}: its history is written elsewhere`);
  return { rows: encodeWalRecord(rows.map((row) => ({ db, name, row }))).toString('base64'), count: rows.length };
}

export interface SeriesFetchDeps {
  client: ClusterClient;
  /** The base URL of the live member holding the monitor's lease, when that is another member. */
  holderAddress: (name: string) => string | undefined;
  log: Logger;
}

/** The reader's side: the holder's rows of the series, or undefined (then the WAL is read). */
export function createSeriesFetch(d: SeriesFetchDeps): (db: DbName, name: string) => Promise<RawRow[] | undefined> {
  return async (db, name) => {
    const address = d.holderAddress(name);
    if (!address) return undefined;
    const target = seriesPath(db, name);
    try {
      // The client signs it (cluster-client.ts): the route takes a peer's proof and nothing else (`auth: 'cluster'`).
      const body = (await d.client.send(address, target, { method: 'GET' })) as { rows?: unknown };
      if (typeof body.rows !== 'string') throw new Error('the answer holds no rows');
      const rows = decodeWalRecord(Buffer.from(body.rows, 'base64'));
      return rows.filter((r) => r.db === db && r.name === name).map((r) => r.row);
    } catch (err) {
      // A handover (409) is expected now and then; anything else is worth a warning.
      const level = err instanceof AppError && err.code === 'CONFLICT' ? 'info' : 'warn';
      d.log[level](
        { err, monitor: name, holder: address },
        'history: the holder did not give its rows; reading the WAL',
      );
      return undefined;
    }
  };
}
