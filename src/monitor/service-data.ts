/**
 * The monitor service's stores and state, second stage of service.ts's composition: secrets, agents, the cluster
 * member, monitors (repo and service), last results, history, monitor types, auto-thresholds, alerting (with its
 * view of a monitor), certificates, the network policy and artifacts. Order matters: each follows the store before it
 * loads, so a change during the load is not missed.
 */
import path from 'node:path';
import type { ServiceConfig } from '../core/config/env.js';
import { createChannelRegistry } from '../core/notify/registry.js';
import { settleWithin } from '../core/platform/drain.js';
import { AgentRegistry } from './agents/agent-registry.js';
import { createAlertingService, type AlertMonitor } from './alerting/alerting.service.js';
import { ArtifactStore } from './artifacts/artifact-store.js';
import { CertInventory } from './certificates/cert-inventory.js';
import { createClusterClient } from './cluster/cluster-client.js';
import type { ClusterCoordinator } from './cluster/coordinator.js';
import { createClusterMember } from './cluster/member.js';
import { createSeriesFetch } from './cluster/series-fetch.js';
import { groupOf, shardOf } from './cluster/shards.js';
import { createHistoryService } from './history/history.service.js';
import { originFields } from './history/origins.js';
import { createNetworkPolicy, parseCidrList } from './monitor-types/lib/network-policy.js';
import { createMonitorTypes } from './monitor-types/registry.js';
import type { NetworkPolicy } from './monitor-types/types.js';
import { LastResults } from './monitors/last-results.js';
import { MonitorsRepo, type StoredMonitor } from './monitors/monitors.repo.js';
import { MonitorsService } from './monitors/monitors.service.js';
import { auditStoredConfigs } from './monitors/stored-config-audit.js';
import { PushLedger } from './push/push-ledger.js';
import { createAutoThresholds } from './reporting/auto-threshold.js';
import { ThresholdShare } from './reporting/auto-threshold-share.js';
import { SecretStore } from './secrets/secret-store.js';
import { MONITOR_API_VERSION, type MonitorPlatform, type MonitorServiceOptions } from './service-platform.js';

export type MonitorStores = Awaited<ReturnType<typeof createStores>>;
export type MonitorData = Awaited<ReturnType<typeof createMonitorData>>;

/** How long a read of a series held elsewhere waits for its holder before it reads the WAL instead. */
const SERIES_FETCH_MS = 5000;

/** The address of the live instance holding a monitor's lease, when that is another instance. */
export function holderAddressOf(
  coordinator: ClusterCoordinator | undefined,
  monitorsRepo: MonitorsRepo,
): (name: string) => string | undefined {
  return (name) => {
    const m = monitorsRepo.get(name);
    const a = m && coordinator?.assignment(name, m.config.probe);
    if (!a || a.here || !a.owner || a.unassigned) return undefined;
    return coordinator!.view().members.find((x) => x.id === a.owner)?.address || undefined;
  };
}

/** Secrets, agents, the cluster member, the monitors repo, last results, history, types and auto-thresholds. */
async function createStores(cfg: ServiceConfig, opts: MonitorServiceOptions, p: MonitorPlatform) {
  const { platform, settings } = p;
  const { store, secrets } = platform;
  const secretStore = new SecretStore(store, secrets);
  const agents = new AgentRegistry(store, secrets);
  await agents.load();
  const member = await createClusterMember(
    cfg,
    MONITOR_API_VERSION,
    platform.log.child({ component: 'cluster' }),
    opts.cluster,
  );
  const coordinator = member.coordinator;
  const monitorsRepo = new MonitorsRepo(store);
  const last = new LastResults();
  const history = await createHistoryService({
    store,
    log: platform.log.child({ component: 'history' }),
    retentionHours: () => Number(settings.get('dataRetention')),
    // A cluster: the instance holding a monitor's shard lease compacts its history (docs/cluster.md "History").
    holds:
      coordinator &&
      ((db, name) => {
        const m = monitorsRepo.get(name);
        return m?.type === db && coordinator.compactsHistory(name, m.config.probe);
      }),
    // Every write is fenced by the lease it was recorded or compacted under (docs/cluster.md "History").
    fenceOf: coordinator && ((_db, name) => coordinator.leaseFence(name, monitorsRepo.get(name)?.config.probe)),
    onFenced: (rows) => {
      for (let i = 0; i < rows; i++) coordinator?.noteFenced();
    },
    // One object literal of one shape (a spread of the latest status, whose fields vary, took ~5 µs per result).
    onRemoteLatest: ({ latest: l, metrics, details, origin }) =>
      last.record(
        {
          name: l.name,
          ts: l.ts,
          status: l.status,
          responseTimeMs: l.responseTimeMs,
          message: l.message,
          metrics,
          details,
        },
        origin,
      ),
    // Each result records where it ran (history/origins.ts): this instance's probe, location and name (INSTANCE).
    origin: { probe: cfg.probe, location: cfg.location, instance: cfg.instance },
    // A read of a series held elsewhere asks its holder first (cluster/series-fetch.ts), within SERIES_FETCH_MS.
    openRowsOf:
      coordinator &&
      createSeriesFetch({
        client: createClusterClient(cfg.certDir, Math.min(cfg.requestTimeoutMs, SERIES_FETCH_MS), platform.peers),
        holderAddress: holderAddressOf(coordinator, monitorsRepo),
        log: platform.log.child({ component: 'history' }),
      }),
  });
  coordinator?.onChange(() => history.ownershipChanged());
  // A clean release writes the rows recorded under the leases first: the next holder's stamp would refuse them.
  coordinator?.beforeRelease(async () => void (await settleWithin(history.flush(), 3000)));
  const pushLedger = new PushLedger();
  const { types, close: closeTypes } = createMonitorTypes({ log: platform.log, dataDir: cfg.dataDir, pushLedger });
  const auto = createAutoThresholds({
    history,
    log: platform.log,
    settings,
    skip: (dbname) => types.get(dbname)?.autoThresholds === false,
    // A cluster: the holder computes a monitor's thresholds (it has every row) and every member reads them.
    cluster: coordinator && {
      share: new ThresholdShare(store, coordinator.id, platform.log.child({ component: 'auto-thresholds' })),
      heldShard: (db, name) => {
        const m = monitorsRepo.get(name);
        if (m?.type !== db || !coordinator.compactsHistory(name, m.config.probe)) return undefined;
        return { group: groupOf(m.config.probe), shard: shardOf(name) };
      },
      heldShards: () => coordinator.view().held,
    },
  });
  settings.onChange((changed) => {
    if (changed.includes('autoThreshold') || changed.includes('autoThresholdRange')) void auto.recompute();
  });
  return { secretStore, agents, member, coordinator, monitorsRepo, last, history, pushLedger, types, closeTypes, auto };
}

/** Alerting: the lease holder decides a monitor's alerts in a cluster; `alertView` is resolved when a result comes. */
function createMonitorAlerting(
  opts: MonitorServiceOptions,
  p: MonitorPlatform,
  s: MonitorStores,
  alertView: (m: StoredMonitor) => AlertMonitor,
) {
  const { platform, smtp } = p;
  const { coordinator, member, monitorsRepo } = s;
  return createAlertingService({
    store: platform.store,
    log: platform.log.child({ component: 'alerting' }),
    secrets: platform.secrets,
    channels: createChannelRegistry(opts.notify),
    // email's settings are the SMTP settings (decrypted); smtpEnabled decides whether it is active.
    external: { email: () => Object.fromEntries([...smtp.definitions().keys()].map((k) => [k, smtp.get(k) ?? ''])) },
    getMonitor: (name) => {
      const m = monitorsRepo.get(name);
      return m ? alertView(m) : undefined;
    },
    // In a cluster the shard lease holder decides a monitor's alerts; deliveries are claimed (docs/cluster.md).
    ...(coordinator
      ? {
          cluster: {
            ownership: coordinator,
            memberId: member.identity.id,
            ttlMs: coordinator.ttlMs,
            heartbeatMs: coordinator.heartbeatMs,
            monitor: (name: string) => {
              const m = monitorsRepo.get(name);
              return m && { probe: m.config.probe };
            },
            namesIn: (group: string, shard: number) => monitorsRepo.shardIndex().names(group, shard),
          },
        }
      : {}),
  });
}

/**
 * Alerting's view of a monitor (stored config, secrets still sealed, + name and type): one per stored version; for
 * a type without secret fields that is exactly the run config, so the two share one object.
 */
function createAlertViews(s: MonitorStores, monitors: () => MonitorsService): (m: StoredMonitor) => AlertMonitor {
  const alertViews = new WeakMap<StoredMonitor, AlertMonitor>();
  return (m) => {
    const t = s.types.get(m.type);
    if (t?.secretFields.length === 0 && !t.embeddedSecrets) return monitors().plainConfig(m);
    const cached = alertViews.get(m);
    if (cached) return cached;
    // Copied key by key, not spread: a frozen spread copy got a hidden class of its own (a heap snapshot at 50,000
    // monitors: 23,236 views, 23,236 maps and descriptor arrays, ~6 MB), and reads of views met a new map each time.
    const v = {} as Record<string, string | undefined>;
    for (const k in m.config) v[k] = m.config[k];
    v.name = m.name;
    v.type = m.type;
    const view = Object.freeze(v) as AlertMonitor;
    alertViews.set(m, view);
    return view;
  };
}

/** The network policy from the settings, rebuilt when networkAllow or networkDeny change. */
function followPolicy(p: MonitorPlatform): () => NetworkPolicy {
  const { settings } = p;
  const build = (): NetworkPolicy =>
    createNetworkPolicy({
      allow: parseCidrList(settings.get('networkAllow') ?? ''),
      deny: parseCidrList(settings.get('networkDeny') ?? ''),
    });
  let policy = build();
  settings.onChange((changed) => {
    if (changed.includes('networkAllow') || changed.includes('networkDeny')) policy = build();
  });
  return () => policy;
}

/**
 * The certificate inventory, loaded, with the records of monitors that no longer exist swept (call after the monitors
 * are loaded). A record's monitor is gone when neither the map nor the store holds it. The store is read again since
 * in a cluster the map may not yet have followed a monitor another instance created during this start; that read
 * sees such a monitor, as its record (read by `load`, before) was written by a check that ran after the create had
 * committed. Left is the window between that read and the delete: a monitor of that name created, checked and its
 * certificate recorded within those milliseconds loses the record (every instance's memory follows the delete) until
 * its next check with a certificate writes it again (a new first-seen time, unless another monitor presents it); GET
 * /certificates lists nothing wrong meanwhile. Rare, at start, only for names that were orphans, and self-healing: no
 * lock is taken. Instances sweeping at once delete the same keys; a second delete finds nothing.
 */
async function loadCertInventory(p: MonitorPlatform, monitorsRepo: MonitorsRepo): Promise<CertInventory> {
  const log = p.platform.log;
  const certs = new CertInventory(p.platform.store, (e) => log.warn({ err: e }, 'certificate inventory write failed'));
  await certs.load();
  const isGone = async (name: string) => monitorsRepo.get(name) === undefined && !(await monitorsRepo.storedNow(name));
  try {
    const swept = await certs.sweep(isGone);
    if (swept > 0) log.info({ swept }, 'certificate inventory: records of monitors that no longer exist swept');
  } catch (e) {
    log.warn({ err: e }, 'certificate inventory sweep failed (GET /certificates still hides such records)');
  }
  return certs;
}

export async function createMonitorData(cfg: ServiceConfig, opts: MonitorServiceOptions, p: MonitorPlatform) {
  const { platform, settings } = p;
  const s = await createStores(cfg, opts, p);
  const { monitorsRepo, types, secretStore, last, history } = s;
  const alertView = createAlertViews(s, () => monitors);
  const alerting = createMonitorAlerting(opts, p, s, alertView);
  const isAdmin = (username: string | undefined) =>
    username !== undefined && platform.users.get(username)?.group === 'admin';
  const monitors = new MonitorsService(monitorsRepo, types, platform.secrets, Date.now, {
    maxMonitorsPerUser: () => Number(settings.get('maxMonitorsPerUser')),
    // Saving: the actor's group decides unscoped references (no actor: an internal call).
    authorizeRef: (use, monitor, actor) => secretStore.authorize(use, monitor, !actor || actor.group === 'admin'),
  });
  await monitorsRepo.load(); // after the service follows the store: a change during the load is not missed
  void auditStoredConfigs(monitors, types, platform.log.child({ component: 'monitors' })).catch((e: unknown) =>
    platform.log.error({ err: e }, 'stored configuration audit failed'),
  );
  const certs = await loadCertInventory(p, monitorsRepo);
  for (const l of history.latestAll())
    last.set(l.name, {
      ts: l.ts,
      status: l.status,
      responseTimeMs: l.responseTimeMs,
      message: l.message,
      ...originFields(history.origin(l.originId)),
    });
  const policy = followPolicy(p);
  const artifacts = new ArtifactStore(
    path.join(cfg.dataDir, 'artifacts'),
    platform.log.child({ component: 'artifacts' }),
  );
  return { ...s, alertView, alerting, isAdmin, monitors, certs, policy, artifacts };
}
