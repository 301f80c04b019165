/**
 * The certificate inventory: every certificate the checks currently see (url/api HTTPS hops, tcp with a `tls`
 * mode), by SHA-256 fingerprint, with the monitors presenting it. Fed from the runner's results (a result whose
 * `details.cert` has a fingerprint), read by GET /certificates. A certificate no monitor presents any more (renewed,
 * monitor deleted) leaves the inventory.
 *
 * Persisted per monitor in the `certificates` bucket (record version 2, key = monitor name: the certificate it last
 * presented), so each record has one writer — the instance that runs the monitor (docs/cluster.md) — and every
 * instance follows the others' writes through the store's change feed (`store.watch`): GET /certificates on any
 * instance lists what every instance's checks saw. A record is written when its certificate or host changes, or an
 * hour after its last write, so the hot path costs a map lookup per result. At start, records of monitors that no
 * longer exist are swept (`sweep`).
 */
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import { certLevel, type CertFacts } from '../monitor-types/lib/http-probe-support.js';
import { HOUR_MS } from '../../core/time.js';

export const CERT_RECORD_VERSION = 2;
const REWRITE_AFTER_MS = HOUR_MS;

export interface CertMonitorRef {
  name: string;
  type: string;
  host: string;
  lastSeenMs: number;
}

export interface CertEntry extends Omit<CertFacts, 'host'> {
  fingerprint256: string;
  monitors: CertMonitorRef[];
  firstSeenMs: number;
  lastSeenMs: number;
}

/** One monitor's certificate (record version 2, key = the monitor's name). */
export interface MonitorCertRecord extends Omit<CertFacts, 'host'>, CertMonitorRef {
  v: typeof CERT_RECORD_VERSION;
  fingerprint256: string;
  /** When the inventory first saw this certificate (any monitor): kept when another monitor starts presenting it. */
  certFirstSeenMs: number;
  /** When this record was last written (this process: the rewrite rule). */
  writtenMs: number;
}

export interface CertView extends CertEntry {
  daysLeft: number;
  level: 'OK' | 'MINOR' | 'MAJOR' | 'CRITICAL';
}

function isCertFacts(x: unknown): x is CertFacts & { fingerprint256: string } {
  const c = x as Partial<CertFacts> | undefined;
  return typeof c?.fingerprint256 === 'string' && typeof c.validToMs === 'number';
}

export class CertInventory {
  private readonly bucket: Bucket;
  private readonly byMonitor = new Map<string, MonitorCertRecord>();
  private readonly byFp = new Map<string, Set<string>>();

  constructor(
    private readonly store: KvStore,
    private readonly onError: (e: unknown) => void,
  ) {
    this.bucket = store.bucket('certificates');
  }

  /** Loads every record, then follows other instances' writes (call once, at start). */
  async load(): Promise<void> {
    this.store.watch('certificates', async (key) => {
      if (key === undefined) return this.reload();
      const name = String(key);
      this.set(name, await this.bucket.get<MonitorCertRecord>(name));
    });
    await this.reload();
  }

  private async reload(): Promise<void> {
    const next = new Map<string, MonitorCertRecord>();
    for await (const { key, value } of this.bucket.range<MonitorCertRecord>()) {
      if (value?.v === CERT_RECORD_VERSION) next.set(String(key), value);
    }
    for (const name of [...this.byMonitor.keys()]) if (!next.has(name)) this.set(name, undefined);
    for (const [name, rec] of next) this.set(name, rec);
  }

  /** Replaces (or removes) a monitor's record in memory. */
  private set(name: string, rec: MonitorCertRecord | undefined): void {
    const prev = this.byMonitor.get(name);
    if (prev) {
      const names = this.byFp.get(prev.fingerprint256);
      names?.delete(name);
      if (names?.size === 0) this.byFp.delete(prev.fingerprint256);
      this.byMonitor.delete(name);
    }
    if (rec?.v !== CERT_RECORD_VERSION) return;
    this.byMonitor.set(name, rec);
    let names = this.byFp.get(rec.fingerprint256);
    if (!names) this.byFp.set(rec.fingerprint256, (names = new Set()));
    names.add(name);
  }

  /** A result of `name`: records its certificate when it carries one (details.cert with a fingerprint). */
  observe(name: string, type: string, details: Record<string, unknown> | undefined, nowMs: number): void {
    const cert = details?.cert;
    if (!isCertFacts(cert)) return;
    const prev = this.byMonitor.get(name);
    if (prev && prev.fingerprint256 === cert.fingerprint256 && prev.host === cert.host && prev.type === type) {
      prev.lastSeenMs = nowMs;
      if (nowMs - prev.writtenMs >= REWRITE_AFTER_MS) this.write(prev, nowMs);
      return;
    }
    const { host, ...facts } = cert;
    const rec: MonitorCertRecord = {
      ...facts,
      v: CERT_RECORD_VERSION,
      name,
      type,
      host,
      lastSeenMs: nowMs,
      certFirstSeenMs: this.firstSeen(cert.fingerprint256) ?? nowMs,
      writtenMs: nowMs,
    };
    this.set(name, rec);
    this.write(rec, nowMs);
  }

  /** A deleted monitor: its certificate loses it (and leaves when nobody presents it). */
  forget(name: string): void {
    if (!this.byMonitor.has(name)) return;
    this.set(name, undefined);
    this.bucket.delete(name).catch(this.onError);
  }

  /**
   * The start-up sweep (after `load`, with the monitors loaded): forgets, in memory and in the store, every record
   * whose monitor `isGone` says no longer exists — orphans that versions before 78878e4 left (a run that outlived its
   * deleted monitor recorded its certificate) and that nothing else deletes. Records are keyed by name only, so a
   * record of a name a monitor has again is kept (its next check with a certificate overwrites it). Resolves how many
   * records this call deleted from the store: when instances sweep at once, each orphan is counted by the one whose
   * delete removed it, the others' deletes find nothing (idempotent). A failed delete goes to `onError`; the record
   * stays in the store, hidden by GET /certificates, and the next start sweeps it again.
   */
  async sweep(isGone: (name: string) => Promise<boolean>): Promise<number> {
    let deleted = 0;
    for (const name of [...this.byMonitor.keys()]) {
      if (!(await isGone(name))) continue;
      this.set(name, undefined);
      try {
        if (await this.bucket.delete(name)) deleted++;
      } catch (e) {
        this.onError(e);
      }
    }
    return deleted;
  }

  /** Every certificate, soonest expiry first, with days left and url's level. */
  list(nowMs: number): CertView[] {
    return [...this.byFp.keys()]
      .map((fp) => {
        const e = this.entry(fp);
        const l = certLevel(e.validToMs, nowMs);
        return { ...e, daysLeft: l.daysLeft, level: l.severity ?? ('OK' as const) };
      })
      .sort((a, b) => a.validToMs - b.validToMs || a.fingerprint256.localeCompare(b.fingerprint256));
  }

  private firstSeen(fp: string): number | undefined {
    let first: number | undefined;
    for (const n of this.byFp.get(fp) ?? [])
      first = Math.min(first ?? Infinity, this.byMonitor.get(n)!.certFirstSeenMs);
    return first;
  }

  /** A fingerprint's entry from its monitors' records (facts of the latest seen). */
  private entry(fp: string): CertEntry {
    const recs = [...this.byFp.get(fp)!].map((n) => this.byMonitor.get(n)!);
    const latest = recs.reduce((a, b) => (b.lastSeenMs > a.lastSeenMs ? b : a));
    const { v: _v, name: _n, type: _t, host: _h, lastSeenMs, certFirstSeenMs: _f, writtenMs: _w, ...facts } = latest;
    return {
      ...facts,
      fingerprint256: fp,
      monitors: recs.map((r) => ({ name: r.name, type: r.type, host: r.host, lastSeenMs: r.lastSeenMs })),
      firstSeenMs: Math.min(...recs.map((r) => r.certFirstSeenMs)),
      lastSeenMs,
    };
  }

  private write(rec: MonitorCertRecord, nowMs: number): void {
    rec.writtenMs = nowMs;
    this.bucket.put(rec.name, { ...rec }).catch(this.onError);
  }
}
