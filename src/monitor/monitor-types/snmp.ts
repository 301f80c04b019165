/**
 * snmp: GET of `snmpOid` with v1/v2c (community) or v3 (noAuthNoPriv, authNoPriv, authPriv; auth MD5, SHA, SHA224,
 * SHA256, SHA384, SHA512; privacy DES, AES, AES192, AES256). Value and SNMP type go to details; a numeric value to
 * metrics.value; with patternComp/patternCompValCri the value is compared (holds → severity CRITICAL).
 *
 * Outcomes: value → up; no response → down; noSuchObject/noSuchInstance/endOfMibView or an error-status
 * (v1 noSuchName) → error; v3 unknown user / wrong digest → error. An authPriv request the agent never answers is
 * followed by one authNoPriv probe of the same user: if the agent answers that, the privacy password or protocol
 * is wrong (the agent drops what it cannot decrypt) → error; if not → down.
 */
import { Type } from '@sinclair/typebox';
import { Choice } from '../../core/http/schemas.js';
import { isIP } from 'node:net';
import { AppError } from '../../core/errors.js';
import { isPolicyError, resolveChecked } from './lib/network-policy.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType } from './types.js';
import { isPatternComp, PATTERN_COMPS, withPatternComp } from './lib/extract.js';
import { AUTH_PROTOCOLS, PRIV_PROTOCOLS, SECURITY_LEVELS, SNMP_VERSIONS } from './lib/snmp-protocols.js';
import type { SnmpTarget } from './lib/snmp-session.js';

const HOST_RE = /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;
const OID_RE = /^\.?(?:0|[1-9]\d*)(?:\.(?:0|[1-9]\d*))+$/;

function oneOf<T extends string>(list: readonly T[], v: string | undefined, field: string): T {
  const hit = list.find((x) => x.toLowerCase() === (v ?? '').trim().toLowerCase());
  if (!hit) throw AppError.badRequest(`${field} must be one of ${list.join(', ')}`, field);
  return hit;
}

function need(config: MonitorConfig, field: string, why: string): string {
  const v = config[field];
  if (v === undefined || v === '') throw AppError.badRequest(`${field} is required ${why}`, field);
  return v;
}

function validate(config: MonitorConfig): void {
  const ip = need(config, 'ip', 'for snmp').trim();
  if (isIP(ip.replace(/^\[|\]$/g, '')) === 0 && !HOST_RE.test(ip))
    throw AppError.badRequest('ip is not a valid host', 'ip');
  if (config.port?.trim() && !(/^\d{1,5}$/.test(config.port.trim()) && +config.port >= 1 && +config.port <= 65535)) {
    throw AppError.badRequest('port must be a number 1-65535', 'port');
  }
  if (!OID_RE.test(need(config, 'snmpOid', 'for snmp').trim())) {
    throw AppError.badRequest('snmpOid must be a dotted numeric OID such as 1.3.6.1.2.1.1.3.0', 'snmpOid');
  }
  const version = oneOf(SNMP_VERSIONS, need(config, 'version', 'for snmp'), 'version');
  if (version !== 'v3') need(config, 'community', `for SNMP ${version}`);
  else {
    need(config, 'v3Username', 'for SNMP v3');
    const level = oneOf(SECURITY_LEVELS, config.v3SecurityLevel, 'v3SecurityLevel');
    if (level !== 'noAuthNoPriv') {
      oneOf(AUTH_PROTOCOLS, config.v3AuthProtocol, 'v3AuthProtocol');
      if (need(config, 'v3AuthPassword', `for ${level}`).length < 8) {
        throw AppError.badRequest('v3AuthPassword must have at least 8 characters', 'v3AuthPassword');
      }
    }
    if (level === 'authPriv') {
      oneOf(PRIV_PROTOCOLS, config.v3PrivProtocol, 'v3PrivProtocol');
      if (need(config, 'v3PrivPassword', 'for authPriv').length < 8) {
        throw AppError.badRequest('v3PrivPassword must have at least 8 characters', 'v3PrivPassword');
      }
    }
  }
  if (config.patternComp?.trim()) {
    if (!isPatternComp(config.patternComp.trim())) {
      throw AppError.badRequest(`patternComp must be one of ${PATTERN_COMPS.join(', ')}`, 'patternComp');
    }
    need(config, 'patternCompValCri', 'with patternComp');
  }
}

export function targetOf(config: MonitorConfig, timeoutMs: number): SnmpTarget {
  const version = oneOf(SNMP_VERSIONS, config.version, 'version');
  const t: SnmpTarget = {
    host: config.ip!.trim().replace(/^\[|\]$/g, ''),
    port: config.port?.trim() ? Number(config.port) : 161,
    version,
    timeoutMs,
  };
  if (version !== 'v3') t.community = config.community ?? '';
  else {
    t.v3 = {
      username: config.v3Username ?? '',
      level: oneOf(SECURITY_LEVELS, config.v3SecurityLevel, 'v3SecurityLevel'),
      authProtocol: config.v3AuthProtocol?.trim().toUpperCase(),
      authPassword: config.v3AuthPassword,
      privProtocol: config.v3PrivProtocol?.trim().toUpperCase(),
      privPassword: config.v3PrivPassword,
    };
  }
  return t;
}

async function check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
  let target: SnmpTarget;
  try {
    validate(config);
    target = targetOf(config, ctx.timeoutMs);
  } catch (e) {
    return { outcome: 'exception', responseTimeMs: 0, message: (e as Error).message };
  }
  try {
    // The network policy: the agent's address is resolved and checked once, and requests go to that address.
    target = { ...target, host: (await resolveChecked(ctx.policy, target.host)).address };
  } catch (e) {
    return { outcome: isPolicyError(e) ? 'exception' : 'down', responseTimeMs: 0, message: (e as Error).message };
  }
  const oid = config.snmpOid!.trim().replace(/^\./, '');
  const isPriv = target.v3?.level === 'authPriv';
  // authPriv keeps a quarter of the budget for the diagnosis probe below
  const getTarget = isPriv ? { ...target, timeoutMs: Math.max(100, Math.floor(ctx.timeoutMs * 0.75)) } : target;
  // net-snmp loads at the first check, not at service start (docs/benchmarks.md "start to listening and idle RSS").
  const { snmpGet } = await import('./lib/snmp-session.js');
  const startMs = ctx.now();
  const r = await snmpGet(getTarget, oid, ctx.signal);
  const ms = ctx.now() - startMs;
  const metrics: Record<string, number> = { snmpMs: ms };
  if (!r.ok) {
    if (r.kind === 'timeout' && isPriv && !ctx.signal.aborted) {
      const rest = Math.max(100, ctx.deadlineMs - ctx.now() - 20);
      const probe = await snmpGet(
        { ...target, timeoutMs: rest, v3: { ...target.v3!, level: 'authNoPriv' } },
        oid,
        ctx.signal,
      );
      if (probe.ok || (probe.kind !== 'timeout' && probe.kind !== 'aborted')) {
        const message =
          'SNMPv3 decryption failed: the agent answers this user without privacy but not the encrypted request (wrong privacy password or protocol)';
        return { outcome: 'error', responseTimeMs: ms, message, metrics };
      }
    }
    const down = r.kind === 'timeout' || r.kind === 'aborted';
    return {
      outcome: down ? 'down' : 'error',
      responseTimeMs: ms,
      message: r.message,
      metrics,
      details: { oid, failure: r.kind },
    };
  }
  const v = r.value;
  if (v.numeric !== undefined) metrics.value = v.numeric;
  const result: CheckResult = {
    outcome: 'up',
    responseTimeMs: ms,
    message: `${oid} = ${v.type}: ${v.value.slice(0, 200)}`,
    metrics,
    details: { oid: v.oid, type: v.type, value: v.value },
  };
  return withPatternComp(result, v.value, config);
}

const s = (description: string) => Type.Optional(Type.String({ description }));
const c = (values: readonly string[], description: string) =>
  Type.Optional(Choice(values, { optional: true, anyCase: true, description: `${description}, any case` }));

export const snmpType: MonitorType = {
  id: 'snmp',
  fields: Type.Object({
    ip: Type.String({ description: 'Agent host (IPv4/IPv6 address or hostname)' }),
    port: s('UDP port, default 161'),
    version: Choice(SNMP_VERSIONS, { anyCase: true, description: 'SNMP version, any case' }),
    community: s('Community string (v1/v2c)'),
    snmpOid: Type.String({ description: 'Dotted numeric OID to GET, e.g. 1.3.6.1.2.1.1.3.0' }),
    v3Username: s('SNMPv3 user name'),
    v3SecurityLevel: c(SECURITY_LEVELS, 'SNMPv3 security level'),
    v3AuthProtocol: c(AUTH_PROTOCOLS, 'SNMPv3 authentication protocol'),
    v3AuthPassword: s('SNMPv3 authentication password (at least 8 characters)'),
    v3PrivProtocol: c(PRIV_PROTOCOLS, 'SNMPv3 privacy protocol'),
    v3PrivPassword: s('SNMPv3 privacy password (at least 8 characters)'),
    patternComp: Type.Optional(
      Choice(PATTERN_COMPS, { optional: true, description: 'Comparison of the value with patternCompValCri' }),
    ),
    patternCompValCri: s('Comparison value; when the comparison holds the level is CRITICAL'),
  }),
  required: ['ip', 'snmpOid', 'version'],
  secretFields: ['community', 'v3AuthPassword', 'v3PrivPassword'],
  secretTarget: (c) => ({ ip: (c.ip ?? '').trim().toLowerCase(), port: c.port?.trim() || '161' }),
  validate,
  check,
};

export default snmpType;
