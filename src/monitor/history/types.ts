/**
 * Types shared by the reporting/history modules. A `ResultRecord` is what the runner hands `HistoryService.append`
 * after every run; the status set and the dbnames come from the monitor-type contract.
 */
import { DBNAMES, STATUSES, type DbName, type Status } from '../monitor-types/types.js';
import { DAY_MS, HOUR_MS } from '../../core/time.js';

export { DBNAMES, STATUSES, type DbName, type Status };

export interface ResultRecord {
  /** Unix ms of the run. */
  ts: number;
  status: Status;
  responseTimeMs: number;
  metrics?: Record<string, number>;
  message?: string;
  details?: Record<string, unknown>;
  /** Reads only (set from the row's origin, origins.ts; absent when unknown): the instance that ran the check. */
  probe?: string;
  location?: string;
  instance?: string;
}

/** The latest known result of one monitor (kept in memory and persisted). */
export interface LatestStatus {
  dbname: DbName;
  name: string;
  ts: number;
  status: Status;
  responseTimeMs: number;
  message?: string;
  /** The result's origin id (origins.ts); absent when unknown. */
  originId?: number;
}

/** Status code stored in one byte (index into STATUSES). */
export const STATUS_CODE: Readonly<Record<Status, number>> = Object.fromEntries(
  STATUSES.map((s, i) => [s, i]),
) as Record<Status, number>;

/** Codes 0..3 (OK, MINOR, MAJOR, CRITICAL): the target answered; these count as available. */
export const UP_MAX_CODE = 3;
export const DOWNTIME_CODE = STATUS_CODE.DOWNTIME;

/** Start of the UTC day of ts. */
export function dayStart(ts: number): number {
  return Math.floor(ts / DAY_MS) * DAY_MS;
}

export function hourStart(ts: number): number {
  return Math.floor(ts / HOUR_MS) * HOUR_MS;
}

export function isDbName(s: string): s is DbName {
  return (DBNAMES as readonly string[]).includes(s);
}

/** Counts per status, keyed by status name. */
export type StatusCounts = Record<Status, number>;
