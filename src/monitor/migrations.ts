/**
 * The monitor service's store migrations and format versions (after core's: src/core/platform/core-migrations.ts).
 * HOW TO ADD ONE: append `{ id: '<yyyy-mm-dd>-<what>', description, up }` at the END of MONITOR_MIGRATIONS (never
 * reorder, rename or remove an entry), make `up` idempotent (it may meet records already converted), bump the format
 * in MONITOR_FORMATS, and add an upgrade fixture of the old format (docs/storage.md "Adding a migration").
 */
import type { Migration } from '../core/storage/migrations.js';
import type { BatchOp } from '../core/storage/kv-store.js';
import { openSecretBox, type SecretBox } from '../core/secrets/secret-box.js';
import { headerValues, urlUserinfo } from './monitor-types/lib/credentials.js';
import type { EmbeddedSecret } from './monitor-types/types.js';
import { WAL_BUCKET } from './history/history-wal.js';
import { hourStart } from './history/types.js';

/** The fields of format-1 monitor records that may embed credentials (frozen with that format; security §7). */
const V1_EMBEDDED: Record<string, Record<string, EmbeddedSecret>> = {
  api: { api: urlUserinfo, headers: headerValues },
  url: { url: urlUserinfo },
};

/** A format-1 certificate record (key = fingerprint), frozen with that format. */
interface CertRecordV1 {
  v: 1;
  fingerprint256: string;
  firstSeenMs: number;
  monitors: Array<{ name: string; type: string; host: string; lastSeenMs: number }>;
  [fact: string]: unknown;
}

interface MonitorRecordV1 {
  name: string;
  type: string;
  config: Record<string, string>;
}

export const MONITOR_FORMATS: Record<string, number> = {
  /** 2: URL userinfo and sensitive header values sealed; optional createdBy/updatedBy. */
  monitors: 2,
  /** 2: optional scope {monitors, tags, origins}; absent = unscoped (admins' monitors only). */
  secrets: 2,
  /** {prefix, monitors, tags, origins} per Vault path prefix. */
  'vault-scopes': 1,
  /** hist.raw values (result-codec.ts; the chunk also carries its own version byte). 2: a per-chunk origin table
   * and each row's origin index in flag bits 5-7 (version-1 chunks stay readable: their rows' origin is unknown). */
  'hist.chunk': 2,
  /** hist.day values (rollup.ts; own version byte). */
  'hist.day': 1,
  /** hist.wal records (history-wal.ts: dbname byte table + 1-row chunks). 2: keyed [hourMs, writer, seq] (was
   * [flushMs, seq]: two processes on one store overwrote each other's records). 3: the embedded 1-row chunks are
   * hist.chunk 2 (they carry the row's origin); records with version-1 chunks stay readable. */
  'hist.wal': 3,
  /** Where results come from: origin id → {v: 1, probe, location, instance} (history/origins.ts). */
  origins: 1,
  /** The byte tables DBNAMES → code and STATUSES → code (pinned by format-tables.test.ts). enum.dbnames 2: `push` is
   * byte 9 (appended; no record changes, so no migration — the bump makes an older build refuse a store that may hold
   * byte 9 instead of misreading it). */
  'enum.dbnames': 2,
  'enum.statuses': 1,
  alert_state: 1,
  alert_queue: 1,
  /** A cluster's acknowledgement records, key = monitor name: {v: 1, openedMs?, alertedStatus, ack?} (ack absent:
   * removed) for the open problem they name (alerting/ack-records.ts); new bucket, nothing to convert. */
  alert_acks: 1,
  alert_channels: 1,
  maintenance: 1,
  artifacts: 1,
  /** The certificate inventory (certificates/cert-inventory.ts). 2: one record per monitor (key = monitor name, v: 2)
   * instead of one per fingerprint listing its monitors (v: 1), so each record has one writer in a cluster. */
  certificates: 2,
  /** Registered discovery agents (agents/agent-registry.ts; each record carries v: 1; token sealed). */
  agents: 1,
  /** What push monitors heard, key = monitor name (push/push-ledger.ts PushRecord; each record carries v: 1). */
  push: 1,
  /** Enrichment side records, key [monitor, result ts] (agents/enricher.service.ts; each record carries v: 1). */
  enrichments: 1,
};

export const MONITOR_MIGRATIONS: readonly Migration[] = [
  {
    id: '2026-11-26-monitors-embedded-credentials',
    description:
      'monitors: URL userinfo passwords and sensitive header values sealed (security §7); createdBy/updatedBy and secret scopes are new optional fields',
    async up({ store, dataDir, service, log }) {
      const bucket = store.bucket('monitors');
      let box: SecretBox | undefined;
      let sealed = 0;
      const records: Array<{ key: string; value: MonitorRecordV1 }> = [];
      for await (const { key, value } of bucket.range<MonitorRecordV1>()) records.push({ key: String(key), value });
      for (const { key, value } of records) {
        const fields = V1_EMBEDDED[value.type];
        if (!fields) continue;
        const config = { ...value.config };
        let changed = false;
        for (const [field, embedded] of Object.entries(fields)) {
          const v = config[field];
          // Idempotent: a sealed value does not parse as a URL or headers with a credential, so it is left alone.
          if (v === undefined || !embedded.has(v)) continue;
          box ??= openSecretBox(dataDir, service);
          if (box.isSealed(v)) continue;
          config[field] = box.encrypt(v);
          changed = true;
        }
        if (!changed) continue;
        await bucket.put(key, { ...value, config });
        sealed++;
      }
      if (sealed > 0) log.info({ monitors: sealed }, 'sealed credentials in URL userinfo and header values');
      // createdBy/updatedBy cannot be known for old records (they stay absent: authors unknown); secrets without a
      // scope stay unscoped on purpose (usable by admins' monitors only until an admin scopes them, security §1).
    },
  },
  {
    id: '2026-11-26-agents-registry',
    description: 'agents: new bucket of registered discovery agents (format 1); nothing to convert',
    async up() {
      // A new bucket: older stores have none, so there is nothing to rewrite. The entry records the format's start.
    },
  },
  {
    id: '2026-11-26-enrichments',
    description:
      'enrichments: new bucket of what discovery agents found about failing targets (format 1); nothing to convert',
    async up() {
      // A new bucket: nothing to rewrite; the entry records the format's start.
    },
  },
  {
    id: '2026-11-26-certificates-per-monitor',
    description:
      'certificates: one record per monitor (key = monitor name, v: 2) instead of one per fingerprint (v: 1), so each has one writer in a cluster',
    async up({ store, log }) {
      const bucket = store.bucket('certificates');
      const old: Array<{ key: string; value: CertRecordV1 }> = [];
      for await (const { key, value } of bucket.range<CertRecordV1>()) {
        if ((value as { v?: unknown } | undefined)?.v === 1) old.push({ key: String(key), value }); // idempotent
      }
      if (old.length === 0) return;
      const ops: BatchOp[] = old.map(({ key }) => ({ type: 'delete', bucket: 'certificates', key }));
      for (const { value } of old) {
        const { v: _v, monitors, firstSeenMs, lastSeenMs: _l, ...facts } = value;
        for (const m of monitors) {
          const rec = { ...facts, v: 2, ...m, certFirstSeenMs: firstSeenMs, writtenMs: m.lastSeenMs };
          ops.push({ type: 'put', bucket: 'certificates', key: m.name, value: rec });
        }
      }
      await store.batch(ops);
      log.info({ certificates: old.length }, 'certificate inventory stored per monitor');
    },
  },
  {
    id: '2026-11-26-push-heard',
    description: 'push: new bucket of what push monitors heard (format 1), shared by a cluster; nothing to convert',
    async up() {
      // A new bucket: nothing to rewrite; the entry records the format's start.
    },
  },
  {
    id: '2026-11-26-hist-wal-writer-keys',
    description: 'hist.wal: records re-keyed [flushMs, seq] → [hourMs, writer, seq] (format 2); record bytes unchanged',
    async up({ store }) {
      // One atomic batch (the WAL holds at most about an hour of records): a crash leaves the old keys, and a run
      // again finds only what is still in the old form. A format-1 record holds rows of hourStart(flushMs) only.
      const puts: BatchOp[] = [];
      const deletes: BatchOp[] = [];
      for await (const { key, value } of store.bucket(WAL_BUCKET).range()) {
        if (!Array.isArray(key) || key.length !== 2 || typeof key[0] !== 'number') continue;
        puts.push({ type: 'put', bucket: WAL_BUCKET, key: [hourStart(key[0]), 'format-1', puts.length], value });
        deletes.push({ type: 'delete', bucket: WAL_BUCKET, key });
      }
      if (puts.length > 0) await store.batch([...puts, ...deletes]);
    },
  },
  {
    id: '2026-11-26-hist-result-origins',
    description:
      "hist.raw chunks version 2 and hist.wal format 3 record each result's origin (probe, location, instance); hist.latest may carry an origin id; nothing to convert",
    async up() {
      // Nothing is rewritten on purpose: version-1 chunks and WAL records stay readable (decodeChunk reads both) and
      // their results' origin is unknown (not recorded then), which is what reads report. A compaction rewrites an
      // hour it touches as version 2, keeping unknown rows unknown. The entry marks the store: an older build,
      // which cannot read version-2 chunks, refuses it instead of failing on the first read.
    },
  },
  {
    id: '2026-11-26-origins',
    description: 'origins: new bucket naming where results come from (format 1); nothing to convert',
    async up() {
      // A new bucket: nothing to rewrite; each process registers its origin at start (history/origins.ts).
    },
  },
  {
    id: '2026-11-28-auto-thresholds-shared',
    description:
      'auto_thresholds: new bucket of the automatic thresholds a cluster shares (format 1); nothing to convert',
    async up() {
      // A new bucket, written by cluster members only (reporting/auto-threshold-share.ts): nothing to rewrite.
    },
  },
];
