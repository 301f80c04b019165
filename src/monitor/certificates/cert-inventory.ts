/**
 * The certificate inventory: every certificate the checks currently see (url/api HTTPS hops, tcp with a `tls`
 * mode), keyed by SHA-256 fingerprint, with the monitors presenting it. Fed from the runner's results (a result whose
 * `details.cert` has a fingerprint), read by GET /certificates. A certificate no monitor presents any more (renewed,
 * monitor deleted) leaves the inventory. Persisted in the `certificates` bucket (record version 1), written only when
 * an entry changes or an hour after its last write, so the hot path costs a map lookup per result.
 */
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import { certLevel, type CertFacts } from '../monitor-types/lib/http-probe-support.js';
import { HOUR_MS } from '../../core/time.js';

export const CERT_RECORD_VERSION = 1;
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

interface CertRecord extends CertEntry {
  v: typeof CERT_RECORD_VERSION;
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
  private readonly byFp = new Map<string, CertEntry>();
  private readonly byMonitor = new Map<string, string>();
  private readonly writtenMs = new Map<string, number>();

  constructor(
    store: KvStore,
    private readonly onError: (e: unknown) => void,
  ) {
    this.bucket = store.bucket('certificates');
  }

  async load(): Promise<void> {
    for await (const { value } of this.bucket.range<CertRecord>()) {
      if (value?.v !== CERT_RECORD_VERSION) continue;
      const { v: _v, ...entry } = value;
      this.byFp.set(entry.fingerprint256, entry);
      for (const m of entry.monitors) this.byMonitor.set(m.name, entry.fingerprint256);
    }
  }

  /** A result of `name`: records its certificate when it carries one (details.cert with a fingerprint). */
  observe(name: string, type: string, details: Record<string, unknown> | undefined, nowMs: number): void {
    const cert = details?.cert;
    if (!isCertFacts(cert)) return;
    const fp = cert.fingerprint256;
    const prev = this.byMonitor.get(name);
    let changed = false;
    if (prev !== undefined && prev !== fp) changed = this.detach(name, prev, nowMs);
    let e = this.byFp.get(fp);
    if (!e) {
      const { host: _host, ...facts } = cert;
      e = { ...facts, fingerprint256: fp, monitors: [], firstSeenMs: nowMs, lastSeenMs: nowMs };
      this.byFp.set(fp, e);
      changed = true;
    }
    e.lastSeenMs = nowMs;
    const ref = e.monitors.find((m) => m.name === name);
    if (ref) {
      ref.lastSeenMs = nowMs;
      ref.host = cert.host;
    } else {
      e.monitors.push({ name, type, host: cert.host, lastSeenMs: nowMs });
      changed = true;
    }
    this.byMonitor.set(name, fp);
    if (changed || nowMs - (this.writtenMs.get(fp) ?? 0) >= REWRITE_AFTER_MS) this.write(fp, nowMs);
  }

  /** A deleted monitor: its certificates lose it (and leave when nobody presents them). */
  forget(name: string, nowMs = Date.now()): void {
    const fp = this.byMonitor.get(name);
    if (fp !== undefined) this.detach(name, fp, nowMs);
  }

  /** Every certificate, soonest expiry first, with days left and url's level. */
  list(nowMs: number): CertView[] {
    return [...this.byFp.values()]
      .map((e) => {
        const l = certLevel(e.validToMs, nowMs);
        return { ...e, daysLeft: l.daysLeft, level: l.severity ?? ('OK' as const) };
      })
      .sort((a, b) => a.validToMs - b.validToMs || a.fingerprint256.localeCompare(b.fingerprint256));
  }

  private detach(name: string, fp: string, nowMs: number): boolean {
    this.byMonitor.delete(name);
    const e = this.byFp.get(fp);
    if (!e) return false;
    e.monitors = e.monitors.filter((m) => m.name !== name);
    if (e.monitors.length === 0) {
      this.byFp.delete(fp);
      this.writtenMs.delete(fp);
      this.bucket.delete(fp).catch(this.onError);
    } else this.write(fp, nowMs);
    return true;
  }

  private write(fp: string, nowMs: number): void {
    const e = this.byFp.get(fp);
    if (!e) return;
    this.writtenMs.set(fp, nowMs);
    const rec: CertRecord = { v: CERT_RECORD_VERSION, ...e, monitors: e.monitors.map((m) => ({ ...m })) };
    this.bucket.put(fp, rec).catch(this.onError);
  }
}
