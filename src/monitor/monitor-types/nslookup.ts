/**
 * nslookup: one DNS query of `recordType` for `domain`, at `dnsServer` (host, host:port, [v6]:port) or the
 * system's resolv.conf servers. Always through c-ares (node:dns Resolver), never dns.lookup, so no lookup ties up
 * libuv's thread pool.
 *
 * Outcomes: answers and (no expectedValue, or one answer equals it) → up; answers but none equals expectedValue →
 * error; NXDOMAIN / no answer / SERVFAIL / REFUSED → error with the rcode; resolver timeout, refused or unreachable
 * server → down. responseTimeMs = resolution time (it feeds the thresholds).
 */
import { promises as dns } from 'node:dns';
import { Type } from '@sinclair/typebox';
import { Choice } from '../../core/http/schemas.js';
import { AppError } from '../../core/errors.js';
import { isPolicyError, policyError } from './lib/network-policy.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType } from './types.js';
import {
  RECORD_TYPES,
  answerMatches,
  isRecordType,
  parseDnsServer,
  queryRecords,
  rcodeOf,
  resolveServerHost,
  serverString,
  type RecordType,
} from './lib/dns-query.js';

const DOMAIN_RE = /^(?=.{1,253}\.?$)[A-Za-z0-9_*](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;

function validate(config: MonitorConfig): void {
  const domain = config.domain?.trim();
  if (!domain) throw AppError.badRequest('domain is required', 'domain');
  if (!DOMAIN_RE.test(domain)) throw AppError.badRequest('domain is not a valid DNS name', 'domain');
  const rt = config.recordType?.trim().toUpperCase() ?? '';
  if (!isRecordType(rt))
    throw AppError.badRequest(`recordType must be one of ${RECORD_TYPES.join(', ')}`, 'recordType');
  if (config.dnsServer?.trim()) {
    try {
      parseDnsServer(config.dnsServer);
    } catch (e) {
      throw AppError.badRequest((e as Error).message, 'dnsServer');
    }
  }
}

async function makeResolver(config: MonitorConfig, ctx: CheckContext): Promise<dns.Resolver> {
  const resolver = new dns.Resolver({ timeout: Math.max(50, ctx.timeoutMs), tries: 1 });
  if (config.dnsServer?.trim()) {
    const server = parseDnsServer(config.dnsServer);
    const host = await resolveServerHost(server.host, ctx.timeoutMs);
    // The network policy applies to an explicit dnsServer (queries go to the checked address); the system's own
    // resolvers (resolv.conf) are the administrator's configuration and are not fenced.
    const reason = ctx.policy.denies(host);
    if (reason !== undefined) throw policyError(`dnsServer ${server.host}: ${reason}`);
    resolver.setServers([serverString({ host, port: server.port })]);
  }
  return resolver;
}

function failure(e: unknown, domain: string, type: RecordType, ms: number, aborted: boolean): CheckResult {
  const code = (e as NodeJS.ErrnoException).code;
  const rcode = rcodeOf(code);
  const metrics = { dnsMs: ms };
  if (rcode) {
    return {
      outcome: 'error',
      responseTimeMs: ms,
      message: `${type} ${domain}: ${rcode}`,
      metrics,
      details: { rcode, code },
    };
  }
  const why =
    aborted || code === 'ECANCELLED'
      ? 'timed out'
      : code === 'ETIMEOUT'
        ? 'resolver timed out'
        : (code ?? (e as Error).message);
  return { outcome: 'down', responseTimeMs: ms, message: `${type} ${domain}: ${why}`, metrics, details: { code } };
}

async function check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
  const domain = config.domain!.trim();
  const type = config.recordType!.trim().toUpperCase() as RecordType;
  const expected = config.expectedValue ?? '';
  const startMs = ctx.now();
  let resolver: dns.Resolver | undefined;
  const onAbort = (): void => resolver?.cancel();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    resolver = await makeResolver(config, ctx);
    if (ctx.signal.aborted) resolver.cancel();
    const { answers, raw } = await queryRecords(resolver, domain, type);
    const ms = ctx.now() - startMs;
    const details = { answers, records: raw, server: resolver.getServers() };
    const metrics = { dnsMs: ms, answerCount: answers.length };
    if (expected.trim() && !answerMatches(type, answers, expected)) {
      const message = `${type} ${domain}: expected '${expected}', got ${answers.map((a) => `'${a}'`).join(', ')}`;
      return { outcome: 'error', responseTimeMs: ms, message, metrics, details };
    }
    return { outcome: 'up', responseTimeMs: ms, message: `${type} ${domain}: ${answers.join(', ')}`, metrics, details };
  } catch (e) {
    if (isPolicyError(e)) return { outcome: 'exception', responseTimeMs: ctx.now() - startMs, message: e.message };
    if (e instanceof Error && !(e as NodeJS.ErrnoException).code && /dnsServer/.test(e.message)) {
      return { outcome: 'exception', responseTimeMs: 0, message: e.message };
    }
    return failure(e, domain, type, ctx.now() - startMs, ctx.signal.aborted);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

export const nslookupType: MonitorType = {
  id: 'nslookup',
  fields: Type.Object({
    domain: Type.String({ description: 'Name to look up' }),
    recordType: Choice(RECORD_TYPES, { anyCase: true, description: 'Record type, any case' }),
    expectedValue: Type.Optional(
      Type.String({
        description:
          'Expected answer; matches when any answer equals it (MX "priority host" or host; TXT chunks joined)',
      }),
    ),
    dnsServer: Type.Optional(
      Type.String({ description: 'Server to query: host, host:port or [IPv6]:port; empty = the system resolver' }),
    ),
  }),
  required: ['domain', 'recordType'],
  secretFields: [],
  validate,
  check,
};

export default nslookupType;
