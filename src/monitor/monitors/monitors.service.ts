/**
 * Monitor definitions: create, update, enable/disable, delete, list, details. Validation is the common fields
 * (common-fields.ts) plus the type's own schema and validate(); secrets of the type are sealed at rest and never
 * returned (a view lists which are set in `secretFieldsSet`). Every change is announced to listeners (the scheduler)
 * so it applies live.
 */
import { AppError } from '../../core/errors.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import type { DbName, MonitorConfig, MonitorType, SecretRef } from '../monitor-types/types.js';
import { applyRequestRules, normaliseCommon, parseTags, schedMatches } from './common-fields.js';
import { MonitorsRepo, type StoredMonitor } from './monitors.repo.js';
import { assertSecretsStayBound } from './secret-binding.js';
import { DependencyGraph, parseParents } from './dependencies.js';

/** Who makes a change: recorded as createdBy/updatedBy, counted against the per-user monitor limit. */
export interface Actor {
  username: string;
  group: string;
}

export interface MonitorsServiceOptions {
  /** The most monitors one non-admin user may have created (setting maxMonitorsPerUser); absent: no limit. */
  maxMonitorsPerUser?: () => number;
  /** Why a monitor saved by `actor` may not use a secret reference (undefined: it may); scopes, docs/security.md §1. */
  authorizeRef?: (
    use: SecretRef,
    monitor: { name: string; tags: string[] },
    actor?: Actor,
  ) => Promise<string | undefined>;
}

export type MonitorView = Record<string, unknown> & {
  name: string;
  type: DbName;
  secretFieldsSet: string[];
  createdMs: number;
  updatedMs: number;
  createdBy?: string;
  updatedBy?: string;
};

/** Structured values a type accepts besides strings (exec steps as a JSON array) are stored as JSON text. */
function asStrings(body: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || v === null) out[k] = undefined;
    else if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'object') out[k] = JSON.stringify(v);
    else {
      const scalar = v as number | boolean | bigint;
      out[k] = String(scalar);
    }
  }
  return out;
}

const by = (actor: Actor | undefined): { updatedBy?: string } => (actor ? { updatedBy: actor.username } : {});

export type ChangeListener = (name: string, monitor: StoredMonitor | undefined) => void;

export class MonitorsService {
  private readonly listeners: ChangeListener[] = [];
  /** Each monitor's view as JSON without its closing brace, for fast list responses; dropped on change. */
  private readonly viewJson = new Map<string, string>();
  /** Decrypted run configs per stored monitor version (see plainConfig). */
  private readonly plain = new WeakMap<StoredMonitor, Readonly<MonitorConfig>>();
  /** Parents and tags of every monitor: cycle checks at create/update, failing ancestors at run time. */
  readonly dependencies: DependencyGraph;

  constructor(
    readonly repo: MonitorsRepo,
    private readonly types: ReadonlyMap<DbName, MonitorType>,
    private readonly box: SecretBox,
    private readonly now: () => number = Date.now,
    private readonly opts: MonitorsServiceOptions = {},
  ) {
    this.dependencies = new DependencyGraph(
      () => this.repo.all(),
      (n) => this.repo.get(n),
    );
    // Another instance's change reaches the listeners (the scheduler) like a local one.
    this.repo.follow((name, m) => this.emit(name, m));
  }

  onChange(fn: ChangeListener): void {
    this.listeners.push(fn);
  }

  type(id: DbName): MonitorType {
    const t = this.types.get(id);
    if (!t) throw AppError.notFound(`unknown monitor type ${id}`);
    return t;
  }

  private emit(name: string, m: StoredMonitor | undefined): void {
    this.viewJson.delete(name);
    this.dependencies.invalidate();
    for (const fn of this.listeners) fn(name, m);
  }

  /** Fills defaults into and validates a full plain-text config (`request`: what the request itself set); throws 400
   * naming the field. */
  private validate(
    type: MonitorType,
    c: Record<string, string | undefined>,
    request: Record<string, string | undefined>,
  ): void {
    for (const [k, v] of Object.entries(type.defaults ?? {})) if (!c[k]) c[k] = v;
    applyRequestRules(request, c);
    normaliseCommon(c, type);
    parseParents(c.parents); // 400 naming body.parents for an entry that is neither a name nor tag:<tag>
    for (const f of type.required)
      if (c[f] === undefined || c[f] === '')
        throw AppError.badRequest(`${f} is required for ${type.id} monitors`, `body.${f}`);
    try {
      type.validate?.(c as MonitorConfig);
    } catch (e) {
      // Types name the field bare ("port"); the API names it where it sits in the request ("body.port").
      if (e instanceof AppError && e.field && !e.field.startsWith('body.'))
        throw AppError.badRequest(e.message, `body.${e.field}`);
      throw e;
    }
  }

  /** 400 naming the field when the config uses a secret reference outside its scope (for this monitor, on this
   * origin, or unscoped and the actor no admin). */
  private async checkRefs(type: MonitorType, c: Record<string, string | undefined>, actor?: Actor): Promise<void> {
    const authorize = this.opts.authorizeRef;
    if (!authorize || !type.secretRefs) return;
    const monitor = { name: c.name ?? '', tags: parseTags(c.tags) };
    for (const ref of type.secretRefs(c as MonitorConfig)) {
      const refused = await authorize(ref, monitor, actor);
      if (refused) throw AppError.badRequest(`${ref.where}: ${refused}`, `body.${ref.field}`);
    }
  }

  private seal(type: MonitorType, c: Record<string, string | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(c)) {
      if (v === undefined) continue;
      const secret = type.secretFields.includes(k) || (type.embeddedSecrets?.[k]?.has(v) ?? false);
      out[k] = secret && v !== '' && !this.box.isSealed(v) ? this.box.encrypt(v) : v;
    }
    return out;
  }

  /** The config with secrets decrypted, for running checks. */
  /**
   * The config a check runs with: secrets decrypted, name and type set. Made once per stored version of the monitor
   * (an update stores a new object) and frozen, since every run of the monitor shares it. `keep: false` (the start-up
   * audit, which reads every monitor once) makes it without keeping it: a cluster member would otherwise hold, for every
   * monitor of the cluster, a copy it never runs with, its secrets decrypted.
   */
  plainConfig(m: StoredMonitor, keep = true): Readonly<MonitorConfig> {
    let out = this.plain.get(m);
    if (out) return out;
    const t = this.type(m.type);
    const c: MonitorConfig = { name: m.name, type: m.type };
    for (const [k, v] of Object.entries(t.absentMeans ?? {})) if (m.config[k] === undefined) c[k] = v;
    for (const [k, v] of Object.entries(m.config))
      c[k] = (t.secretFields.includes(k) || t.embeddedSecrets?.[k]) && this.box.isSealed(v) ? this.box.decrypt(v) : v;
    out = Object.freeze(c);
    if (keep) this.plain.set(m, out);
    return out;
  }

  view(m: StoredMonitor): MonitorView {
    const t = this.type(m.type);
    const out: MonitorView = {
      name: m.name,
      type: m.type,
      secretFieldsSet: [],
      createdMs: m.createdMs,
      updatedMs: m.updatedMs,
      ...(m.createdBy === undefined ? {} : { createdBy: m.createdBy }),
      ...(m.updatedBy === undefined ? {} : { updatedBy: m.updatedBy }),
    };
    for (const [k, v] of Object.entries(t.absentMeans ?? {})) if (m.config[k] === undefined) out[k] = v;
    for (const [k, v] of Object.entries(m.config)) {
      const embedded = t.embeddedSecrets?.[k];
      if (t.secretFields.includes(k)) {
        if (v !== '') out.secretFieldsSet.push(k);
      } else if (embedded) {
        // URL userinfo and sensitive header values: shown as *** (write-only), whether sealed yet or not.
        const plain = this.box.isSealed(v) ? this.box.decrypt(v) : v;
        out[k] = embedded.has(plain) ? embedded.redact(plain) : plain;
      } else out[k] = v;
    }
    return out;
  }

  /** JSON of view(m) without its closing brace, so callers can append fields. */
  viewPrefix(m: StoredMonitor): string {
    let j = this.viewJson.get(m.name);
    if (j === undefined) {
      j = JSON.stringify(this.view(m)).slice(0, -1);
      this.viewJson.set(m.name, j);
    }
    return j;
  }

  /** 409 when a non-admin user already has maxMonitorsPerUser monitors (counted by createdBy). */
  private checkLimit(actor: Actor | undefined): void {
    const max = this.opts.maxMonitorsPerUser?.();
    if (!actor || actor.group === 'admin' || max === undefined) return;
    let n = 0;
    for (const m of this.repo.all()) if (m.createdBy === actor.username) n++;
    if (n >= max)
      throw new AppError(
        'CONFLICT',
        `user ${actor.username} has ${n} monitors, the limit maxMonitorsPerUser is ${max}: delete one or ask an admin to raise the limit`,
        { field: 'maxMonitorsPerUser' },
      );
  }

  /** `shown` receives the plain values of the type's generated secrets (push: the token), for the answer only. */
  async create(
    typeId: DbName,
    body: Record<string, unknown>,
    actor?: Actor,
    shown: Record<string, string> = {},
  ): Promise<StoredMonitor> {
    const type = this.type(typeId);
    const c = asStrings(body);
    this.validate(type, c, asStrings(body));
    for (const [k, make] of Object.entries(type.generatedSecrets ?? {})) {
      const g = make();
      c[k] = g.stored;
      shown[k] = g.shown;
    }
    if (this.repo.get(c.name!)) throw AppError.conflict(`a monitor named ${c.name} already exists`);
    this.dependencies.assertNoCycle({ name: c.name!, config: c });
    this.checkLimit(actor);
    await this.checkRefs(type, c, actor);
    const now = this.now();
    const m: StoredMonitor = {
      name: c.name!,
      type: typeId,
      config: this.seal(type, c),
      createdMs: now,
      updatedMs: now,
      ...(actor ? { createdBy: actor.username, updatedBy: actor.username } : {}),
    };
    delete m.config.name;
    await this.repo.put(m);
    this.emit(m.name, m);
    return m;
  }

  /** Finds a monitor by sched + name (404 when unknown or the sched does not name its schedule, see schedMatches)
   * and, when given, its type. */
  find(sched: string, name: string, typeId?: DbName): StoredMonitor {
    const m = this.repo.get(name);
    if (!m || !schedMatches(sched, m.config) || (typeId && m.type !== typeId)) {
      throw AppError.notFound(`no ${typeId ?? ''}${typeId ? ' ' : ''}monitor ${name} with sched ${sched}`);
    }
    return m;
  }

  get(name: string): StoredMonitor {
    const m = this.repo.get(name);
    if (!m) throw AppError.notFound(`monitor ${name} not found`);
    return m;
  }

  /** Partial update: the given fields replace the stored ones (an absent secret keeps its value); name can't change. */
  async update(
    typeId: DbName,
    sched: string,
    name: string,
    raw: Record<string, unknown>,
    actor?: Actor,
  ): Promise<StoredMonitor> {
    const body = asStrings(raw);
    const cur = this.find(sched, name, typeId);
    const type = this.type(typeId);
    if (body.name !== undefined && body.name !== name) {
      throw AppError.badRequest('name cannot change; create a new monitor and delete this one', 'body.name');
    }
    const plain = this.plainConfig(cur) as Record<string, string | undefined>;
    // `***` in a URL's password or a sensitive header's value stands for the stored credential.
    const kept: string[] = [];
    for (const [k, embedded] of Object.entries(type.embeddedSecrets ?? {})) {
      const req = body[k];
      const stored = plain[k];
      if (req === undefined || !stored) continue;
      const r = embedded.restore(req, stored);
      if (!r.kept) continue;
      body[k] = r.value;
      kept.push(k);
    }
    const c: Record<string, string | undefined> = { ...plain, ...body, name };
    delete c.type;
    this.validate(type, c, body);
    assertSecretsStayBound(type, plain as MonitorConfig, c as MonitorConfig, body, kept);
    this.dependencies.assertNoCycle({ name, config: c });
    await this.checkRefs(type, c, actor);
    const m: StoredMonitor = { ...cur, config: this.seal(type, c), updatedMs: this.now(), ...by(actor) };
    delete m.config.name;
    await this.repo.put(m);
    this.emit(m.name, m);
    return m;
  }

  /** Makes new values of the type's generated secrets (push: a new token; the old one stops working at once) and
   * returns the monitor with their plain values, shown this once. 400 when the type generates none. */
  async rotate(
    typeId: DbName,
    sched: string,
    name: string,
    actor?: Actor,
  ): Promise<{ monitor: StoredMonitor; shown: Record<string, string> }> {
    const cur = this.find(sched, name, typeId);
    const gen = Object.entries(this.type(typeId).generatedSecrets ?? {});
    if (gen.length === 0) throw AppError.badRequest(`${typeId} monitors have no generated secret to rotate`);
    const config = { ...cur.config };
    const shown: Record<string, string> = {};
    for (const [k, make] of gen) {
      const g = make();
      config[k] = this.box.encrypt(g.stored);
      shown[k] = g.shown;
    }
    const m: StoredMonitor = { ...cur, config, updatedMs: this.now(), ...by(actor) };
    await this.repo.put(m);
    this.emit(m.name, m);
    return { monitor: m, shown };
  }

  async setState(sched: string, name: string, state: 'on' | 'off', actor?: Actor): Promise<StoredMonitor> {
    const cur = this.find(sched, name);
    const m: StoredMonitor = { ...cur, config: { ...cur.config, state }, updatedMs: this.now(), ...by(actor) };
    await this.repo.put(m);
    this.emit(m.name, m);
    return m;
  }

  async remove(sched: string, name: string): Promise<StoredMonitor> {
    const cur = this.find(sched, name);
    await this.repo.delete(name);
    this.emit(name, undefined);
    return cur;
  }

  list(filter: { type?: string; state?: string } = {}): StoredMonitor[] {
    const out: StoredMonitor[] = [];
    for (const m of this.repo.all()) {
      if (filter.type && m.type !== filter.type) continue;
      if (filter.state && m.config.state !== filter.state) continue;
      out.push(m);
    }
    return out;
  }

  tags(m: StoredMonitor): string[] {
    return parseTags(m.config.tags);
  }
}
