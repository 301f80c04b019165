/**
 * The contract every monitor type implements (one file per type in this folder, named by its dbname, plus one line in
 * registry.ts). A type describes its create fields and *returns facts*; the runner (monitors/run.service.ts) owns the
 * timeout, retries, thresholds, final status, storage and alerts.
 *
 * A check never throws for a down or failing target: it returns `outcome: 'down' | 'error'`. It throws only for bugs.
 * Configuration problems found at run time (a client-cert file that is missing, a vault reference that does not
 * resolve) return `outcome: 'exception'`.
 */
import type { TObject } from '@sinclair/typebox';
import type { Logger } from 'pino';

export const DBNAMES = ['exec', 'url', 'api', 'tcp', 'ping', 'nslookup', 'snmp', 'db', 'sys', 'push'] as const;
export type DbName = (typeof DBNAMES)[number];

export const STATUSES = ['OK', 'MINOR', 'MAJOR', 'CRITICAL', 'DOWN', 'ERROR', 'EXCEPTION', 'DOWNTIME'] as const;
export type Status = (typeof STATUSES)[number];
export type Severity = 'MINOR' | 'MAJOR' | 'CRITICAL';

export type Outcome = 'up' | 'down' | 'error' | 'exception';

export interface CheckResult {
  /** up: the check ran and passed; down: target unreachable (refused, timeout, DNS failure); error: the check ran and
   * failed (HTTP >= 400, pattern absent, value mismatch); exception: configuration or system fault at run time. */
  outcome: Outcome;
  /** Wall time of the measured operation, ms. */
  responseTimeMs: number;
  /** A level the type itself judged (cert expiry, patternComp, packet loss). The runner takes the worst of this and
   * the threshold level. */
  severity?: Severity;
  /** Human-readable summary or error text. Never contains a secret. */
  message?: string;
  /** Numeric figures, units in the names (dnsMs, connectMs, certDaysLeft, cpuPct...). */
  metrics?: Record<string, number>;
  /** Non-numeric facts (extracted value, redirect chain, DNS answers, SNMP value type...). JSON-serialisable. */
  details?: Record<string, unknown>;
  /** The value threshMin/Maj/Cri apply to; defaults to responseTimeMs (sys: the highest utilisation %). null: there
   * is nothing to compare this run (an api value that is not a number), so no threshold level applies. */
  thresholdValue?: number | null;
}

/** Settings-level fence for url/api targets: checked on the address actually connected, after every redirect. */
export interface NetworkPolicy {
  /** Returns a reason string when the address may not be connected to, undefined when it may. */
  denies(address: string): string | undefined;
}

export interface CheckContext {
  /** Aborted when the monitor's timeout expires; the check must stop and release everything it holds. */
  signal: AbortSignal;
  /** The whole check's deadline (Unix ms). */
  deadlineMs: number;
  /** The timeout in ms (same as deadlineMs - start). */
  timeoutMs: number;
  now: () => number;
  log: Logger;
  policy: NetworkPolicy;
  /** Directory for artifacts of this run (screenshots, video, HAR), created on demand by the type. */
  artifactDir?: string;
  /** The service's own encrypted secret store (named secrets, TOTP seeds), decrypted on read. */
  secrets: {
    get(name: string): Promise<string | undefined>;
    /** Why monitor `monitor` may not use a template reference where it types it (undefined: it may); enforces the
     * scopes an admin set (docs/security.md §1). Absent (unit tests): every use is allowed. */
    authorize?(monitor: string, use: SecretUse): Promise<string | undefined>;
  };
  /** Current service settings (string values as the spec writes them), e.g. vaultAddr. */
  settings: { get(key: string): string | undefined };
}

/** One use of a {{secret:…}} / {{totp:…}} / {{vault:…}} reference: the page origin its value is typed on. */
export interface SecretUse {
  kind: 'secret' | 'totp' | 'vault';
  /** secret/totp: the secret's name; vault: mount/path#key. */
  ref: string;
  origin: string | undefined;
}

/** A reference in a config, with the request field it sits in and where (e.g. the step). */
export interface SecretRef extends SecretUse {
  field: string;
  where: string;
}

/** How a plain field embeds credentials (lib/credentials.ts). */
export interface EmbeddedSecret {
  /** True when the value holds a credential. */
  has(value: string): boolean;
  /** The value as the API shows it: each credential replaced by `***`. */
  redact(value: string): string;
  /** A request value in which `***` stands for the stored credential: the value with it put back (`kept`: it was). */
  restore(value: string, stored: string): { value: string; kept: boolean };
}

/** A stored monitor as the check sees it: the common fields plus its type's fields, secrets decrypted. All values
 * are strings as the spec writes them (numbers parsed by the type where it needs them). */
export type MonitorConfig = Record<string, string | undefined> & { name: string; type?: string };

export interface MonitorType {
  /** = file name = dbname. */
  readonly id: DbName;
  /** TypeBox schema of this type's own create fields (without the common ones). */
  readonly fields: TObject;
  /** Fields required at create time (in addition to the common required ones). */
  readonly required: readonly string[];
  /** Common fields (monitors/common-fields.ts) this type requires at create besides `name` (url, per the spec:
   * display_name, sched, state, probe). Absent: only `name`. */
  readonly requiredCommon?: readonly string[];
  /** Fields that are secrets: encrypted at rest, never returned by the API, never logged. */
  readonly secretFields: readonly string[];
  /** Plain fields that may embed a credential (URL userinfo, header values): sealed whole at rest when they do, shown
   * with the credential redacted, bound to the target like secretFields (docs/security.md §7). */
  readonly embeddedSecrets?: Readonly<Record<string, EmbeddedSecret>>;
  /** What the stored secrets are bound to (docs/security.md §2): the target fields, each normalised (an http URL to
   * its scheme+host+port, a port to its default when empty). An update that changes any of them keeps no stored
   * secret: the request must supply every set secret field again, else 400. Absent: the type has no secrets. */
  secretTarget?(config: MonitorConfig): Readonly<Record<string, string>>;
  /** The secret references the config uses, each with the origin it would be typed on as far as the config tells;
   * checked against their scopes at create/update (400 naming the field). */
  secretRefs?(config: MonitorConfig): SecretRef[];
  /** Values filled in at create/update for fields left absent or empty (and shown as `default` in the OpenAPI);
   * they override the common defaults (exec: timeout 60). A `timeout` here is also what the runner uses for a stored
   * record without one. */
  readonly defaults?: Readonly<Record<string, string>>;
  /** What a field absent from a stored record means: records written before the field existed keep their meaning.
   * Applied when a stored monitor is read (run, update, view). */
  readonly absentMeans?: Readonly<Record<string, string>>;
  /** Cross-field validation beyond the schema (enums that depend on other fields, regex compile, ...). Throws
   * AppError.badRequest(message, field) naming the field. May normalise values in place (upper-case an enum, fill a
   * default that depends on other fields). */
  validate?(config: MonitorConfig): void;
  /** What threshMin/Maj/Cri compare for this config: the response time (the default; automatic thresholds, computed
   * from response times, apply only then) or a value of the type's own (sys: utilisation %, api: extracted number). */
  thresholdsOn?(config: MonitorConfig): 'responseTime' | 'value';
  /** False when thresholds never compare the response time for this type, whatever the config (sys: utilisation %):
   * no automatic thresholds are computed for its monitors (reporting/auto-threshold.ts). Absent: they are. */
  readonly autoThresholds?: false;
  /** Secret fields the service makes itself (push: the ping token), each listed in `secretFields` too. A request never
   * sets one (the create/update bodies leave them out: 400 as an unknown field); `make()` runs at create and at a
   * rotation (POST /<type>/rotate/{sched}/{name}, registered for types that have any): `stored` is kept (sealed),
   * `shown` is returned once in that answer under `generated` and never again. */
  readonly generatedSecrets?: Readonly<Record<string, () => { stored: string; shown: string }>>;
  /** The host and TCP port the check talks to, when it has one (tcp, url, api, db): a failing run asks the discovery
   * agent registered for that host what listens there (agents/enricher.service.ts). Undefined: nothing to ask. */
  endpoint?(config: MonitorConfig): { host: string; port: number } | undefined;
  /** Runs one check. */
  check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult>;
  /** Optional: many checks of this type due together run as one batch (ping via one fping process). */
  checkBatch?(configs: MonitorConfig[], ctx: CheckContext): Promise<CheckResult[]>;
  /** Lower concurrency cap for expensive types (browser). */
  readonly maxConcurrent?: number;
}
