// The API answers the dashboard reads, as types for the JSDoc of web/ (`npm run typecheck`; import('./types.js').X).
// Types only: no page loads this file and ui.routes.ts does not serve it. Each shape is its route's response schema
// (the OpenAPI document, GET /docs/index.html/json, built from the TypeBox schemas under src/) or, where that schema is
// an open object, the code that builds the answer (named on the type). Fields the dashboard does not read may be left
// out; none is added that the service does not send.

/** A result's status (STATUSES, src/monitor/monitor-types/types.ts). */
export type Status = 'OK' | 'MINOR' | 'MAJOR' | 'CRITICAL' | 'DOWN' | 'ERROR' | 'EXCEPTION' | 'DOWNTIME';
/** What the dashboard shows for a monitor: its last result's status, OFF (disabled) or PENDING (no result yet). */
export type ShownStatus = Status | 'OFF' | 'PENDING';
/** A user's group (GET /api/me, /api/users). */
export type Group = 'admin' | 'user' | 'readonly';

/** POST /login, GET /refresh_token. */
export type LoginAnswer = { code: number; expire: string; token: string };
/** GET /api/me. */
export type Me = { username: string; group: Group; tokenKind: string; expiresMs: number };

/**
 * A monitor as the service shows it (MonitorsService.view, src/monitor/monitors/monitors.service.ts): metadata, then
 * the config fields as stored, every one a string (secret fields are not shown, only named in secretFieldsSet).
 * `type` is one of the service's types; the dashboard takes the list from the OpenAPI document, not from here.
 */
export type MonitorView = {
  name: string;
  type: string;
  secretFieldsSet: string[];
  createdMs: number;
  updatedMs: number;
  createdBy?: string;
  updatedBy?: string;
  /** Common fields (src/monitor/monitors/common-fields.ts); sched, state and probe have stored defaults. */
  sched: string;
  state: string;
  probe: string;
  display_name?: string;
  schedCron?: string;
  location?: string;
  tags?: string;
  /** Set by `sentinel apply` only. */
  managedBy?: string;
  /** The target of the types with one: url (url), api (api), ip (tcp, ping, snmp), domain (nslookup), dbIp (db). */
  url?: string;
  api?: string;
  ip?: string;
  domain?: string;
  dbIp?: string;
  /** Every other config field of the monitor's type (a string). */
  [field: string]: unknown;
};

/** Where a result ran (src/monitor/history/origins.ts): absent for results recorded before origins were. */
export type ResultOrigin = { probe?: string; location?: string; instance?: string };

/** The latest result kept per monitor (LastResult, src/monitor/monitors/last-results.ts). */
export type LastResult = ResultOrigin & {
  ts: number;
  status: Status;
  responseTimeMs: number;
  message?: string;
  certDaysLeft?: number;
  /** The failing parent this result's alerts were suppressed for (dependencies). */
  suppressedBy?: string;
};

/** One monitor of GET /monitors: its view plus its last result and next due time. */
export type MonitorSummary = MonitorView & {
  last?: LastResult;
  nextDueMs: number | null;
  /** In a cluster: no live instance may run it (its probe has no member). */
  unassigned?: boolean;
};

/** One exec step's outcome (StepResult, src/monitor/monitor-types/exec/step-runner.ts). */
export type StepResult = {
  name: string;
  action: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  error?: string;
  screenshot?: string;
};
/** A stored artifact of an exec run (ArtifactInfo, src/monitor/monitor-types/exec/artifacts.ts). */
export type ArtifactInfo = { file: string; kind: 'screenshot' | 'video' | 'har'; bytes: number; step?: number };
/** A result's non-numeric facts: per type; exec results carry their steps and artifacts (exec.ts). */
export type ResultDetails = { steps?: StepResult[]; artifacts?: ArtifactInfo[]; [fact: string]: unknown };

/** A result as history keeps it (ResultRecord, src/monitor/history/types.ts): the details' `recent` runs. */
export type ResultRecord = ResultOrigin & {
  ts: number;
  status: Status;
  responseTimeMs: number;
  metrics?: Record<string, number>;
  message?: string;
  details?: ResultDetails;
};
/** GET /monitor/run/{name}/show: the run's full result, the monitor's state and a note when it is off. */
export type RunAnswer = ResultRecord & {
  name: string;
  type?: string;
  outcome?: string;
  attempts?: number;
  thresholds?: Record<string, unknown>;
  downtime?: boolean;
  state: 'on' | 'off';
  note?: string;
};

/** A push monitor's ping paths and what was last heard (PushService.detailsOf, src/monitor/push/push.service.ts). */
export type PushDetails = {
  pushPort: number | null;
  paths: { success: string; start: string; fail: string; exitCode: string };
  lastPingMs: number | null;
  lastKind: 'start' | 'success' | 'fail' | null;
  lastStartMs: number | null;
  lastSuccessMs: number | null;
  lastFailMs: number | null;
  lastDurationMs: number | null;
  lateAfterMs: number | null;
};

/** POST /getMonitorDetails (MonitorsApi.details, src/monitor/monitors/monitors.api.ts). */
export type MonitorDetails = {
  monitor: MonitorView;
  /** The scheduler's view (EngineScheduleInfo, src/monitor/monitors/engine.ts); null when not scheduled here. */
  schedule: { nextDueMs: number | null; [field: string]: unknown } | null;
  thresholds: Record<string, unknown>;
  last: LastResult | null;
  recent: ResultRecord[];
  /** Push monitors only. */
  push?: PushDetails;
};

/**
 * The answer of create, update, enable/disable and rotate: each carries the monitor (MonitorsApi; the schema they
 * share with delete, whose answer has none, says optional).
 */
export type SavedAnswer = {
  code: number;
  message: string;
  monitor: MonitorView;
  /** Generated secrets (push: the token), shown this once. */
  generated?: Record<string, string>;
  warnings?: string[];
};

/** GET /alerting/problems (one per monitor), POST and DELETE /alerting/ack/{name}. */
export type Problem = {
  monitor: string;
  status: string;
  lastStatus?: string;
  openedMs?: number;
  lastAlertMs?: number;
  acknowledged?: { by: string; atMs: number; note?: string; status: string };
};

/** GET /enrichments/{name}: what the discovery agent of the target host found on a failing run. */
export type Enrichment = {
  v: number;
  monitor: string;
  ts: number;
  atMs: number;
  agent: string;
  host: string;
  port: number;
  status: string;
  listening?: boolean;
  process?: {
    listening: boolean;
    pid: number | null;
    name?: string;
    user?: string;
    cpuPct?: number;
    rssBytes?: number;
    memPct?: number;
    startTimeMs?: number;
    restarted?: boolean;
  };
  previous?: { name?: string; pid: number | null; seenMs: number };
  hostLoad?: { cpuPct: number; memUsedPct: number; load1: number };
  error?: string;
  summary: string;
};

/** POST /timelineGraph/{dbname}/{key}/{startTime}/{endTime}. */
export type Timeline = {
  dbname: string;
  name: string;
  startTime: number;
  endTime: number;
  segments: Array<{ from: number; to: number; status: Status }>;
  coveredMs: number;
  sharePct: Partial<Record<Status, number>>;
};

/** Per bucket: null where the bucket has no value. */
export type MinAvgMax = { min: Array<number | null>; avg: Array<number | null>; max: Array<number | null> };
/** POST /histGraph/{dbname}/{key}/{startTime}/{endTime}: per bucket its time, run count and response times. */
export type HistGraph = {
  dbname: string;
  name: string;
  startTime: number;
  endTime: number;
  source: 'raw' | 'rollup';
  bucketMs: number;
  t: number[];
  count: number[];
  responseMs: MinAvgMax;
  metrics: Record<string, MinAvgMax>;
};

/** One window of GET /getTrend (and the window before it). */
export type TrendFigures = {
  from: number;
  to: number;
  total: number;
  availabilityPct: number | null;
  avgResponseMs: number | null;
  p95ResponseMs: number | null;
  counts: Record<Status, number>;
};
export type TrendWindow = TrendFigures & {
  previous: TrendFigures;
  change: { availabilityPct: number | null; avgResponseMs: number | null; p95ResponseMs: number | null };
};
/** GET /getTrend/{dbname}/{key}. */
export type Trend = {
  dbname: string;
  name: string;
  now: number;
  '24h': TrendWindow;
  '7d': TrendWindow;
  '4w': TrendWindow;
};

/** GET /certificates: one certificate the checks saw. */
export type Certificate = {
  fingerprint256: string;
  subject?: string;
  sans?: string[];
  issuer?: string;
  keyType?: string;
  serialNumber?: string;
  validFromMs: number;
  validToMs: number;
  daysLeft: number;
  level: 'OK' | 'MINOR' | 'MAJOR' | 'CRITICAL';
  monitors: Array<{ name: string; type: string; sched: string; host: string; lastSeenMs: number }>;
  firstSeenMs: number;
  lastSeenMs: number;
};

/** One instance of GET /cluster (CLUSTER_SCHEMA, src/monitor/cluster/cluster-view.ts). */
export type ClusterMember = {
  id: string;
  self: boolean;
  probe: string;
  location: string;
  version: string;
  address: string;
  startedMs: number;
  lastHeartbeatMs: number;
  resultsPerMin: number;
  fencedWrites: number;
  /** This instance's wall clock minus PostgreSQL's (0 in single mode). */
  clockOffsetMs: number;
  shardCount: number;
  /** Probe group ('*': any probe) → the shards held. */
  shards: Record<string, number[]>;
};
/** GET /cluster. */
export type Cluster = {
  mode: 'single' | 'cluster';
  self: string;
  shardsPerGroup: number;
  heartbeatMs: number;
  ttlMs: number;
  members: ClusterMember[];
  unassigned: { monitors: number; probes: Array<{ probe: string; monitors: number; examples: string[] }> };
};

/** GET /agents, POST /agents/{name}: a registered discovery agent (never its token or CA). */
export type Agent = {
  name: string;
  url: string;
  hosts: string[];
  tokenSet: boolean;
  caCertSet: boolean;
  updatedMs: number;
  updatedBy?: string;
};

/** GET /api/users. */
export type User = {
  username: string;
  fullname: string;
  email: string;
  group: Group;
  enabled: 'true' | 'false';
  createdMs: number;
  updatedMs: number;
};

/** The SMTP part of GET /setting (and of POST /setsmtpvault's answer). */
export type SmtpSettings = {
  smtpHost: string;
  smtpPort: string;
  smtpUser: string;
  smtpPassword: 'set' | 'unset';
  smtpFrom: string;
  smtpEnabled: 'true' | 'false';
  smtpSecure: 'starttls' | 'tls' | 'none';
};
/** GET /setting: every setting is a string (logLevel, dataRetention, timezone, …), smtp is their SMTP group. */
export type Settings = { [setting: string]: string | SmtpSettings; smtp: SmtpSettings };
/** What POST /setsmtpvault's server probe found. */
export type SmtpProbe = {
  ok: boolean;
  host: string;
  port: number;
  mode: string;
  connected: boolean;
  greeting?: string;
  extensions?: string[];
  starttlsOffered?: boolean;
  tls?: { protocol: string | null; cipher?: string; certificateTrusted: boolean };
  authMechanisms?: string[];
  auth: 'accepted' | 'rejected' | 'not offered' | 'not attempted';
  authReply?: string;
  willUse: string;
  error?: string;
  latencyMs: number;
};
/** POST /setsmtpvault. */
export type SmtpAnswer = SmtpSettings & { message: string; probe?: SmtpProbe };

/** GET /alerting/deliveries: one alert delivery. */
export type Delivery = {
  id: string;
  channel: string;
  kind: string;
  monitor: string;
  status: string;
  outcome: string;
  attempts: number;
  error?: string;
  createdMs: number;
  finishedMs: number;
};
/** POST /alerting/channels/{channel}/test. */
export type ChannelTestAnswer = { ok: boolean; latencyMs: number; error?: string; message?: string };
/** GET /alerting/channels: channel id → its settings, secrets as set / unset. */
export type ChannelSettings = Record<string, Record<string, string>>;

/** The JSON schema of one field (the keywords the dashboard reads: TypeBox's, plus x-secret for channel settings). */
export type FieldSchema = {
  description?: string;
  maxLength?: number;
  pattern?: string;
  enum?: string[];
  const?: string;
  anyOf?: FieldSchema[];
  writeOnly?: boolean;
  'x-secret'?: boolean;
};
/** An object's JSON schema: its fields, the required ones. */
export type ObjectSchema = { properties: Record<string, FieldSchema>; required?: string[] };

/** GET /alerting/catalog: one notification channel (CatalogEntry, src/monitor/http/channel-schemas.ts). */
export type CatalogEntry = {
  id: string;
  displayName: string;
  description: string;
  docsUrl: string;
  settings: ObjectSchema;
  secretFields: string[];
  requiredWhenEnabled: string[];
  defaults: Record<string, string>;
  example: Record<string, string>;
  configuredVia?: string;
  /** Per-monitor field → its JSON schema. */
  monitorFields: Record<string, FieldSchema>;
  severity: Record<string, string>;
  kinds: string[];
  probe: boolean;
  probeDescription?: string;
};

/** GET /maintenance: one window (one-off from/to, or recurring cron + duration). */
export type MaintenanceWindow = {
  id: string;
  name: string;
  fromMs?: number;
  toMs?: number;
  cron?: string;
  durationMinutes?: number;
  timezone?: string;
  monitors: string[];
  tags: string[];
  createdMs: number;
  active: boolean;
  nextChangeMs?: number;
};

/** GET /secrets: a secret's name and scope, never its value. */
export type Secret = {
  name: string;
  updatedMs: number;
  scope?: { monitors: string[]; tags: string[]; origins: string[] };
};

/** The part of the OpenAPI document the forms read: each POST /<type>/create's JSON body schema. */
export type OpenApiDoc = {
  paths: Record<string, { post?: { requestBody: { content: { 'application/json': { schema: ObjectSchema } } } } }>;
};

/** What monitors-store.js posts to the poll worker. */
export type PollCommand =
  | { type: 'start'; token: string | undefined; intervalMs: number | undefined }
  | { type: 'token'; token: string }
  | { type: 'now' }
  | { type: 'stop' };
/** What the poll worker posts back: the whole list (full), what changed (delta), or why it stopped. */
export type PollReport =
  | { type: 'full' | 'delta'; changed: MonitorSummary[]; removed: string[]; total: number; tookMs: number }
  | { type: 'unauthorized' }
  | { type: 'error'; message: string };
