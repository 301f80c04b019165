/**
 * One member of a monitor-service cluster (docs/cluster.md): every `heartbeatMs` it writes its membership row,
 * reads the live members and the shard leases, renews the leases it holds (compare-and-set on the epoch), releases
 * the ones another member should now hold, and takes the ones it should hold that are free (never held, released,
 * or expired). It tells listeners whenever the set it holds changes; the engine then schedules exactly the monitors
 * of held shards.
 *
 * Fencing: a lease is valid locally until (monotonic time the renewal was SENT) + ttl − margin, which ends before
 * PostgreSQL's expiry, so before any other member can take the shard over. `holds(lease)` is checked when a
 * scheduled run starts and again just before its result is recorded (history and alerting); a member that was
 * paused, partitioned or slow past its lease records nothing for that shard, and counts the refusal.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ClusterStore, LeaseKey, MemberIdentity, MemberRow, ShardRow } from './cluster-store.js';

export type { MemberIdentity };
import type { Fence } from '../../core/storage/claims.js';
import {
  ANY_GROUP,
  SHARD_COUNT,
  eligible,
  groupOf,
  rendezvousOwner,
  shardFenceKey,
  shardKey,
  shardOf,
} from './shards.js';
import { ResultRate } from './result-rate.js';
import { CLOCK_SKEW_WARN_MS, ClockOffset, type ClockSample } from './clock-offset.js';

export interface Lease extends LeaseKey {
  /** Local monotonic ms until which results of this shard may be recorded. */
  validUntilMono: number;
  /** The store fence every write under this lease carries (`shard:<group>:<shard>`, the lease's epoch): made once
   * with the lease, so a result costs no allocation. */
  readonly fence: Fence;
}

/** A lease just won, and for how long before it the shard may have gone unrun (0: a clean handover or a new shard). */
export interface WonLease extends LeaseKey {
  missedForMs: number;
}

export interface Assignment {
  group: string;
  shard: number;
  /** The member holding the shard's lease, or the one that should take it; null when no live member may. */
  owner: string | null;
  epoch: number | null;
  here: boolean;
  /** No live member serves the monitor's probe: it runs nowhere until one starts. */
  unassigned: boolean;
}

export type OwnershipListener = (won: readonly WonLease[], changed: readonly LeaseKey[]) => void;

/** What the engine and the run path ask of the cluster. */
export interface Ownership {
  leaseFor(name: string, probe: string | undefined): Lease | undefined;
  holds(lease: Lease): boolean;
  assignment(name: string, probe: string | undefined): Assignment;
  /** Whether this member may run monitors of this probe (its own probe's and any); absent: every probe. */
  serves?(probe: string | undefined): boolean;
  /** The lease of (group, shard) held here, valid or not; undefined when not held. */
  leaseAt(group: string, shard: number): Lease | undefined;
  /**
   * Called when the held set changes, with the leases just won (the engine catches up what the gap missed) and every
   * (group, shard) that changed hands here (won or dropped): listeners touch only those shards' monitors.
   */
  onChange(fn: OwnershipListener): void;
  /** Awaited after leases stop being held here and before they are released in the store (a clean handover: alerting
   * flushes its pending writes). Not called for leases lost to expiry. */
  beforeRelease(fn: (leases: readonly LeaseKey[]) => Promise<void>): void;
  /** Counts a recorded result (results per minute) or a refused one (fenced). */
  noteResult(): void;
  noteFenced(): void;
}

export interface CoordinatorOptions {
  store: ClusterStore;
  self: MemberIdentity;
  log: Logger;
  heartbeatMs?: number;
  ttlMs?: number;
  mono?: () => number;
  /** Wall clock (tests: a member whose clock is off). */
  wall?: () => number;
}

export class ClusterCoordinator implements Ownership {
  readonly heartbeatMs: number;
  readonly ttlMs: number;
  private readonly held = new Map<string, Lease>();
  private readonly listeners: OwnershipListener[] = [];
  private readonly releasing: Array<(leases: readonly LeaseKey[]) => Promise<void>> = [];
  private readonly rate = new ResultRate();
  private readonly mono: () => number;
  private members: MemberRow[] = [];
  private rows = new Map<string, ShardRow>();
  private fenced = 0;
  private readonly clock = new ClockOffset();
  private skewWarned = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly opts: CoordinatorOptions) {
    this.heartbeatMs = opts.heartbeatMs ?? 5_000;
    this.ttlMs = opts.ttlMs ?? 15_000;
    this.mono = opts.mono ?? (() => performance.now());
  }

  get id(): string {
    return this.opts.self.id;
  }

  /** Joins: the first heartbeat and claims complete before this resolves. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.runCycle();
    this.arm();
  }

  /** Stops heartbeating WITHOUT releasing anything (tests: a member that hangs). */
  pause(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  resume(): void {
    this.stopped = false;
    this.arm(0);
  }

  /** Leaves cleanly: stops scheduling what it held, releases the leases, removes its row. */
  async stop(): Promise<void> {
    this.pause();
    await this.running;
    const held = [...this.held.values()];
    this.drop(held);
    await this.flushBefore(held);
    await this.opts.store.release(this.id, held).catch(() => undefined);
    await this.opts.store.leave(this.id).catch(() => undefined);
  }

  private arm(delayMs = this.heartbeatMs): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.runCycle().finally(() => this.arm());
    }, delayMs);
  }

  private runCycle(): Promise<void> {
    this.running = this.cycle().catch((err: unknown) => {
      this.opts.log.warn({ err }, 'cluster heartbeat failed');
      const now = this.mono();
      this.drop([...this.held.values()].filter((l) => l.validUntilMono <= now));
    });
    return this.running;
  }

  /** One heartbeat: membership, renewals, releases, claims. */
  async cycle(): Promise<void> {
    const { store, self } = this.opts;
    const sentMono = this.mono();
    const wall = this.opts.wall ?? Date.now;
    const sentWall = wall();
    const pgNowMs = await store.heartbeat({
      ...self,
      resultsPerMin: this.rate.perMinute(),
      fencedWrites: this.fenced,
      clockOffsetMs: this.clock.estimate()?.offsetMs ?? 0,
    });
    this.noteClock(this.clock.add(sentWall, wall(), pgNowMs));
    this.members = await store.liveMembers(this.ttlMs);
    if (!this.members.some((m) => m.id === self.id)) this.members.push({ ...self } as MemberRow);
    this.rows = new Map((await store.shardRows()).map((r) => [shardKey(r.group, r.shard), r]));
    const renewed = new Set(
      (await store.renew(self.id, [...this.held.values()], this.ttlMs)).map((k) => shardKey(k.group, k.shard)),
    );
    const validUntil = sentMono + this.ttlMs - Math.max(1000, this.ttlMs / 5);
    const lost = [...this.held.values()].filter((l) => !renewed.has(shardKey(l.group, l.shard)));
    for (const l of this.held.values()) l.validUntilMono = validUntil;
    const { fresh, expired, unwanted } = this.plan(pgNowMs);
    this.drop([...lost, ...unwanted]);
    if (lost.length) this.opts.log.warn({ shards: lost.length }, 'cluster: leases lost to another member');
    await this.flushBefore(unwanted);
    await store.release(self.id, unwanted);
    const won: WonLease[] = [];
    for (const [group, shards] of fresh) {
      for (const k of await store.claimNew(self.id, group, shards, this.ttlMs)) won.push({ ...k, missedForMs: 0 });
    }
    for (const k of await store.takeOver(self.id, expired, this.ttlMs)) {
      won.push({ ...k, missedForMs: this.missedFor(this.rows.get(shardKey(k.group, k.shard)), pgNowMs) });
    }
    for (const k of won) {
      this.held.set(shardKey(k.group, k.shard), {
        group: k.group,
        shard: k.shard,
        epoch: k.epoch,
        validUntilMono: validUntil,
        fence: { key: shardFenceKey(k.group, k.shard), epoch: k.epoch },
      });
    }
    if (won.length || lost.length || unwanted.length) this.emit(won, won);
  }

  /** Which shards to claim (never held / expired) and which held ones another member should now have. */
  private plan(pgNowMs: number) {
    const fresh = new Map<string, number[]>();
    const expired: LeaseKey[] = [];
    const unwanted: Lease[] = [];
    for (const group of this.groups()) {
      for (let shard = 0; shard < SHARD_COUNT; shard++) {
        const key = shardKey(group, shard);
        const wantMe = rendezvousOwner(group, shard, this.members) === this.id;
        const lease = this.held.get(key);
        if (!wantMe) {
          if (lease) unwanted.push(lease);
          continue;
        }
        if (lease) continue;
        const row = this.rows.get(key);
        if (!row) {
          const list = fresh.get(group);
          if (list) list.push(shard);
          else fresh.set(group, [shard]);
        } else if (row.expiresMs < pgNowMs) expired.push(row);
      }
    }
    return { fresh, expired, unwanted };
  }

  /**
   * How long before now the shard may have gone unrun: since its release, or since the last renewal of a lease that
   * expired (its owner died or hung; it may have run until its local validity ended, so the catch-up can repeat up to
   * one occurrence per monitor: at most one duplicate per handover).
   */
  private missedFor(row: ShardRow | undefined, pgNowMs: number): number {
    if (!row) return 0;
    const since = row.expiresMs === 0 ? row.releasedMs : row.expiresMs - this.ttlMs;
    return since > 0 ? Math.max(0, pgNowMs - since) : 0;
  }

  /** The groups this member may serve: any, and its own probe's. */
  private groups(): string[] {
    const own = groupOf(this.opts.self.probe);
    return own === ANY_GROUP ? [ANY_GROUP] : [ANY_GROUP, own];
  }

  private drop(leases: Lease[]): void {
    for (const l of leases) {
      const key = shardKey(l.group, l.shard);
      if (this.held.get(key) === l) this.held.delete(key);
      l.validUntilMono = 0;
    }
    if (leases.length) this.emit([], leases);
  }

  private async flushBefore(leases: readonly LeaseKey[]): Promise<void> {
    if (leases.length === 0) return;
    for (const fn of this.releasing)
      await fn(leases).catch((err: unknown) => this.opts.log.warn({ err }, 'cluster: flush before release failed'));
  }

  private emit(won: readonly WonLease[], changed: readonly LeaseKey[]): void {
    for (const fn of this.listeners) fn(won, changed);
  }

  leaseFor(name: string, probe: string | undefined): Lease | undefined {
    return this.held.get(shardKey(groupOf(probe), shardOf(name)));
  }

  leaseAt(group: string, shard: number): Lease | undefined {
    return this.held.get(shardKey(group, shard));
  }

  /**
   * The store fence of the monitor's shard lease held here (valid or not: the store decides whether its epoch is
   * still the newest), or undefined when this member holds no lease for it. History writes carry it.
   */
  leaseFence(name: string, probe: string | undefined): Fence | undefined {
    return this.leaseFor(name, probe)?.fence;
  }

  serves(probe: string | undefined): boolean {
    const group = groupOf(probe);
    return group === ANY_GROUP || group === groupOf(this.opts.self.probe);
  }

  holds(lease: Lease): boolean {
    return lease.validUntilMono > this.mono() && this.held.get(shardKey(lease.group, lease.shard)) === lease;
  }

  assignment(name: string, probe: string | undefined): Assignment {
    const group = groupOf(probe);
    const shard = shardOf(name);
    const lease = this.held.get(shardKey(group, shard));
    if (lease) return { group, shard, owner: this.id, epoch: lease.epoch, here: true, unassigned: false };
    const unassigned = !this.members.some((m) => eligible(m, group));
    const row = this.rows.get(shardKey(group, shard));
    const live = row && this.members.some((m) => m.id === row.owner) ? row : undefined;
    const owner = live?.owner ?? rendezvousOwner(group, shard, this.members) ?? null;
    return { group, shard, owner, epoch: live?.epoch ?? null, here: false, unassigned };
  }

  onChange(fn: OwnershipListener): void {
    this.listeners.push(fn);
  }

  beforeRelease(fn: (leases: readonly LeaseKey[]) => Promise<void>): void {
    this.releasing.push(fn);
  }

  /**
   * Whether this member compacts the monitor's history (docs/cluster.md "History"): it holds the shard, or no live
   * member may hold it (its probe has none) and this is the live member with the lowest id — the rows written before
   * the probe's last member left are compacted all the same.
   */
  compactsHistory(name: string, probe: string | undefined): boolean {
    // Asked for every series a flush writes and for every row the follower applies (most of a member's followed rows
    // are of shards held elsewhere): one hash and one map lookup, no Assignment object. Same answer as
    // assignment(): `here` is a held lease, `unassigned` is no live member of the group.
    const group = groupOf(probe);
    if (this.held.has(shardKey(group, shardOf(name)))) return true;
    return !this.members.some((m) => eligible(m, group)) && this.members.every((m) => m.id >= this.id);
  }

  noteResult(): void {
    this.rate.add(Date.now());
  }

  noteFenced(): void {
    this.fenced++;
  }

  /** The live members and the shard leases as last read (GET /cluster). */
  view(): { members: MemberRow[]; rows: ShardRow[]; held: Lease[] } {
    return { members: [...this.members], rows: [...this.rows.values()], held: [...this.held.values()] };
  }

  /** This member's own figures, current (its row in view() is as of the last heartbeat). */
  selfFigures(): { resultsPerMin: number; fencedWrites: number; clockOffsetMs: number } {
    return {
      resultsPerMin: this.rate.perMinute(),
      fencedWrites: this.fenced,
      clockOffsetMs: this.clock.estimate()?.offsetMs ?? 0,
    };
  }

  /** Logs once when this member's clock drifts beyond the bound, and once when it is back. */
  private noteClock(s: ClockSample): void {
    const skewed = ClockOffset.skewed(s);
    if (skewed === this.skewWarned) return;
    this.skewWarned = skewed;
    const fields = { clockOffsetMs: s.offsetMs, uncertaintyMs: s.uncertaintyMs, boundMs: CLOCK_SKEW_WARN_MS };
    if (skewed) this.opts.log.warn(fields, "cluster: this instance's clock is off PostgreSQL's (sync it with NTP)");
    else this.opts.log.info(fields, "cluster: this instance's clock agrees with PostgreSQL's again");
  }
}
