/**
 * Enrichment of failing checks (issue 18, docs/alerting.md "Enrichment"): when a tcp/url/api/db run against
 * host:port is not OK (a slow run is MINOR or worse by its thresholds) and a registered agent runs on that host (or
 * the monitor names one in `agent`), ask the agent what listens on the port and how loaded the host is, and keep the
 * answer as a side record keyed by (monitor, result ts) in bucket `enrichments` (GET /enrichments/{name}).
 *
 * Off the run path: `onResult` returns at once. Lookups run at most `concurrency` at a time (more waiting than
 * MAX_WAITING are skipped), each bounded by the client's timeout, and an answer is reused for `cacheMs` per
 * agent+port. The promise returned settles within `waitMs` with the one-line summary (undefined when later): a problem
 * alert waits for it. OK runs refresh the remembered owner of the port at most every OWNER_REFRESH_MS, so that once
 * the port goes dark the summary can say who listened there before.
 */
import type { Logger } from 'pino';
import type { KvStore } from '../../core/storage/kv-store.js';
import type { DbName, MonitorConfig, MonitorType } from '../monitor-types/types.js';
import type { StoredMonitor } from '../monitors/monitors.repo.js';
import type { AgentRegistry, AgentTarget } from './agent-registry.js';
import type { AgentClient, HostLoad, PortAnswer } from './agent-client.js';
import { summarise } from './enrichment-text.js';

export const ENRICHMENTS_BUCKET = 'enrichments';
const MAX_WAITING = 200;
const OWNER_REFRESH_MS = 60_000;
const KEEP_PER_MONITOR = 50;

/** The side record (format 1). */
export interface Enrichment {
  v: 1;
  monitor: string;
  /** The result's ts. */
  ts: number;
  atMs: number;
  agent: string;
  host: string;
  port: number;
  status: string;
  listening?: boolean;
  process?: Exclude<PortAnswer, { listening: false }> & { restarted?: boolean };
  /** Who listened on the port when last seen (an earlier lookup). */
  previous?: { name?: string; pid: number | null; seenMs: number };
  hostLoad?: HostLoad;
  error?: string;
  summary: string;
}

interface Owner {
  name?: string;
  pid: number | null;
  startTimeMs?: number;
  seenMs: number;
}

export interface EnricherDeps {
  agents: AgentRegistry;
  client: AgentClient;
  types: ReadonlyMap<DbName, MonitorType>;
  store: KvStore;
  log: Logger;
  waitMs: number;
  concurrency: number;
  cacheMs: number;
  now?: () => number;
}

export class Enricher {
  private readonly now: () => number;
  private readonly owners = new Map<string, Owner>();
  private readonly cache = new Map<string, { atMs: number; p: Promise<[PortAnswer, HostLoad | undefined]> }>();
  private readonly refreshed = new Map<string, number>();
  private readonly queue: Array<() => void> = [];
  private active = 0;

  constructor(private readonly d: EnricherDeps) {
    this.now = d.now ?? Date.now;
  }

  /** Called by the result sink; returns the summary promise for a failing run with an agent, else undefined. */
  onResult(
    m: StoredMonitor,
    r: { ts: number; status: string; downtime?: boolean },
  ): Promise<string | undefined> | undefined {
    if (this.d.agents.size === 0 || r.downtime) return undefined;
    const ep = this.d.types.get(m.type)?.endpoint?.(m.config as MonitorConfig);
    if (!ep || !Number.isInteger(ep.port) || ep.port < 1 || ep.port > 65535) return undefined;
    const agent = this.d.agents.target({ host: ep.host, agent: m.config.agent });
    if (!agent) return undefined;
    // Per agent + port + status: monitors of one port failing alike share an answer; a change (MINOR → DOWN) asks again.
    const key = `${agent.name}|${ep.port}|${r.status}`;
    if (r.status === 'OK') {
      if (this.now() - (this.refreshed.get(key) ?? 0) >= OWNER_REFRESH_MS) {
        this.refreshed.set(key, this.now());
        void this.lookup(agent, ep.port, key, false)?.catch(() => undefined);
      }
      return undefined;
    }
    const work = this.enrich(m.name, r, agent, ep.host, ep.port, key);
    if (!work) return undefined;
    if (this.d.waitMs <= 0) return undefined;
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(undefined), this.d.waitMs);
      t.unref();
      void work.then((e) => {
        clearTimeout(t);
        resolve(e?.summary);
      });
    });
  }

  /** The newest side records of a monitor, newest first. */
  async recent(name: string, limit = 20): Promise<Enrichment[]> {
    const out: Enrichment[] = [];
    const b = this.d.store.bucket(ENRICHMENTS_BUCKET);
    for await (const e of b.range<Enrichment>({
      start: [name, Number.MAX_SAFE_INTEGER],
      end: [name, 0],
      reverse: true,
      limit,
    }))
      out.push(e.value);
    return out;
  }

  /** Drops a deleted monitor's records. */
  forget(name: string): void {
    void this.d.store
      .bucket(ENRICHMENTS_BUCKET)
      .deleteRange({ start: [name, 0], end: [name, Number.MAX_SAFE_INTEGER] })
      .catch((e: unknown) => this.d.log.warn({ err: e, monitor: name }, 'enrichment: delete failed'));
  }

  private enrich(
    monitor: string,
    r: { ts: number; status: string },
    agent: AgentTarget,
    host: string,
    port: number,
    key: string,
  ): Promise<Enrichment | undefined> | undefined {
    const before = this.owners.get(`${agent.name}|${port}`);
    const looked = this.lookup(agent, port, key, true);
    if (!looked) return undefined;
    return looked.then(
      ([answer, load]) => this.save({ monitor, ts: r.ts, status: r.status, agent, host, port, answer, load, before }),
      (e: unknown) =>
        this.save({ monitor, ts: r.ts, status: r.status, agent, host, port, before, error: (e as Error).message }),
    );
  }

  /** The agent's answer (cached per agent+port); undefined when too many lookups wait. Remembers the owner. */
  private lookup(
    agent: AgentTarget,
    port: number,
    key: string,
    withLoad: boolean,
  ): Promise<[PortAnswer, HostLoad | undefined]> | undefined {
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.atMs < this.d.cacheMs) return hit.p;
    if (this.queue.length >= MAX_WAITING) return undefined;
    const p = this.limited(() =>
      Promise.all([
        this.d.client.processByPort(agent, port),
        withLoad ? this.d.client.hostLoad(agent).catch(() => undefined) : undefined,
      ]),
    );
    this.cache.set(key, { atMs: this.now(), p });
    if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    void p.then(
      ([a]) => {
        if (a.listening)
          this.owners.set(`${agent.name}|${port}`, {
            name: a.name,
            pid: a.pid,
            startTimeMs: a.startTimeMs,
            seenMs: this.now(),
          });
      },
      (e: unknown) => this.d.log.debug({ err: e, agent: agent.name, port }, 'enrichment: agent lookup failed'),
    );
    return p;
  }

  private limited<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        this.active++;
        fn()
          .then(resolve, reject)
          .finally(() => {
            this.active--;
            this.queue.shift()?.();
          });
      };
      if (this.active < this.d.concurrency) run();
      else this.queue.push(run);
    });
  }

  private async save(x: {
    monitor: string;
    ts: number;
    status: string;
    agent: AgentTarget;
    host: string;
    port: number;
    answer?: PortAnswer;
    load?: HostLoad;
    before?: Owner;
    error?: string;
  }): Promise<Enrichment> {
    const now = this.now();
    const a = x.answer;
    const restarted =
      a?.listening && x.before !== undefined && (a.pid !== x.before.pid || a.startTimeMs !== x.before.startTimeMs);
    const e: Enrichment = {
      v: 1,
      monitor: x.monitor,
      ts: x.ts,
      atMs: now,
      agent: x.agent.name,
      host: x.host,
      port: x.port,
      status: x.status,
      ...(a ? { listening: a.listening } : {}),
      ...(a?.listening ? { process: { ...a, ...(restarted ? { restarted: true } : {}) } } : {}),
      ...(x.before && (!a?.listening || restarted)
        ? { previous: { name: x.before.name, pid: x.before.pid, seenMs: x.before.seenMs } }
        : {}),
      ...(x.load ? { hostLoad: x.load } : {}),
      ...(x.error ? { error: x.error } : {}),
      summary: '',
    };
    e.summary = summarise(e, now);
    const b = this.d.store.bucket(ENRICHMENTS_BUCKET);
    try {
      await b.put([x.monitor, x.ts], e);
      const older: number[] = [];
      for await (const r of b.range({
        start: [x.monitor, x.ts],
        end: [x.monitor, 0],
        reverse: true,
        limit: KEEP_PER_MONITOR + 1,
      }))
        older.push((r.key as [string, number])[1]);
      if (older.length > KEEP_PER_MONITOR)
        await b.deleteRange({ start: [x.monitor, 0], end: [x.monitor, older.at(-1)! + 1] });
    } catch (err) {
      this.d.log.warn({ err, monitor: x.monitor }, 'enrichment: write failed');
    }
    this.d.log.info({ monitor: x.monitor, agent: x.agent.name, port: x.port, summary: e.summary }, 'enrichment');
    return e;
  }
}
