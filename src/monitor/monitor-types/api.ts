/**
 * api: one request (GET/POST/PUT/DELETE) with headers, body, basic auth and an optional client certificate (mTLS),
 * over a fresh connection. The response is parsed as JSON or XML when its Content-Type declares one (a declared body
 * that does not parse → error). `pattern` runs against the raw body text (first 1 MiB); the value comes from the named
 * group `matchGroupName`, else group `matchIndex`, else group 1 (the whole match when there are no groups);
 * `patternComp` + `patternCompValCri` describe the CRITICAL condition. The pattern runs on RE2 semantics off the
 * event loop (lib/safe-regex.ts); the client certificate is PEM text or a file in <DATA_DIR>/client-certs/
 * (lib/client-cert.ts). `typeApi` defaults to GET, in any case.
 *
 * Thresholds (`threshOn`): with a pattern whose value is a number ("numeric extraction and threshold comparison"),
 * threshMin/Maj/Cri compare the extracted value (threshOn `value`, the default when the pattern has a capture group
 * and patternComp is not a string comparison) and the response time keeps thresholds of its own,
 * respThreshMin/Maj/Cri (ms); else they compare the response time (threshOn `responseTime`, and the meaning of
 * records stored before threshOn). `caCert` adds trusted CAs (lib/ca-cert.ts). See docs/checks-http.md.
 */
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { Choice, MAX } from '../../core/http/schemas.js';
import { AppError } from '../../core/errors.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType, Severity } from './types.js';
import {
  compareValue,
  declaredFormat,
  extractValue,
  isPatternComp,
  parseBody,
  PATTERN_COMPS,
  toNumber,
} from './lib/extract.js';
import {
  httpEndpoint,
  httpOrigin,
  judgeAnswer,
  parseBool,
  parseHeaders,
  present,
  validateHttpUrl,
  worst,
} from './lib/http-check.js';
import { probeHttp } from './lib/http-probe.js';
import { compileUserRegex, createRegexRunner, type RegexInput, type RegexRunner } from './lib/safe-regex.js';
import { CLIENT_CERT_DIR, loadClientCert, validateClientCert } from './lib/client-cert.js';
import { validateCaCert } from './lib/ca-cert.js';
import { headerValues, urlUserinfo } from './lib/credentials.js';
import { thresholdLevel } from '../monitors/classify.js';

export const API_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;

const s = (description: string, maxLength: number = MAX.text) => Type.Optional(Type.String({ description, maxLength }));
const bool = (description: string) =>
  Type.Optional(Choice(['true', 'false'], { optional: true, anyCase: true, description }));

const fields = Type.Object({
  api: Type.String({ description: 'Target URL (http or https)' }),
  typeApi: Choice(API_METHODS, { optional: true, anyCase: true, description: 'HTTP method, any case', default: 'GET' }),
  pattern: s(
    'Regular expression (RE2 semantics: no backreferences or lookaround) run against the response body (first 1 MiB); absent from the body → ERROR',
  ),
  matchGroupName: s('Named capture group of pattern holding the value'),
  matchIndex: s('Capture group number holding the value (string number; default 1, or the whole match)'),
  patternComp: Type.Optional(
    Choice(PATTERN_COMPS, { optional: true, description: 'Comparison of the extracted value with patternCompValCri' }),
  ),
  patternCompValCri: s('Comparison value; when the comparison holds the status is CRITICAL'),
  headers: s('Request headers as "Key:Value,Key:Value"', MAX.list),
  body: s('Request body for POST/PUT (Content-Type defaults to application/json when the body is JSON)', MAX.body),
  basicAuthUser: s('Basic authentication user'),
  basicAuthPwd: s('Basic authentication password (secret)'),
  clientCert: s(
    'Client certificate (mTLS), secret: the PEM text itself (at most 64 KiB), or the name of a file in <DATA_DIR>/client-certs/',
    MAX.pem,
  ),
  clientCertKey: s(
    'Private key of clientCert, secret: unencrypted PEM text (at most 64 KiB), or the name of a file in <DATA_DIR>/client-certs/',
    MAX.pem,
  ),
  ignoreTlsErrors: bool('"true" to accept an untrusted or mismatched server certificate (default "false")'),
  caCert: Type.Optional(
    Type.String({
      description:
        'PEM CA certificate(s) to trust in addition to the system store (a private CA), at most 20 and 64 KiB',
      maxLength: 65_536,
    }),
  ),
  threshOn: Type.Optional(
    Choice(['value', 'responseTime'], {
      optional: true,
      description:
        'What threshMin/Maj/Cri compare: value (the number pattern extracts; default when pattern has a capture group ' +
        'and patternComp is not a string comparison) or responseTime (ms; default otherwise)',
    }),
  ),
  respThreshMin: s('With threshOn value: minor threshold of the response time, ms (reached when >=)'),
  respThreshMaj: s('With threshOn value: major threshold of the response time, ms'),
  respThreshCri: s('With threshOn value: critical threshold of the response time, ms'),
});

const RESP_THRESH = ['respThreshMin', 'respThreshMaj', 'respThreshCri'] as const;

/** threshOn when absent: value for a pattern with a capture group that is not compared as a string, else
 * responseTime (a pattern that only has to match, "pong", extracts no value to compare). */
function defaultThreshOn(c: MonitorConfig, groupCount: number): 'value' | 'responseTime' {
  if (!present(c.pattern) || c.patternComp?.trim().startsWith('string')) return 'responseTime';
  return groupCount > 0 ? 'value' : 'responseTime';
}

function validateThresholds(c: MonitorConfig, groupCount: number): void {
  if (!present(c.threshOn)) c.threshOn = defaultThreshOn(c, groupCount);
  if (c.threshOn !== 'value' && c.threshOn !== 'responseTime')
    throw AppError.badRequest('threshOn must be value or responseTime', 'threshOn');
  if (c.threshOn === 'value' && !present(c.pattern))
    throw AppError.badRequest('threshOn value needs a pattern that extracts the value', 'threshOn');
  const nums = RESP_THRESH.map((f) => {
    if (!present(c[f])) return undefined;
    const n = Number(c[f]);
    if (!Number.isFinite(n) || n < 0 || n > 1e12) throw AppError.badRequest(`${f} must be a number >= 0 (ms)`, f);
    return n;
  });
  for (let i = 0; i < 2; i++)
    for (let j = i + 1; j < 3; j++)
      if (nums[i] !== undefined && nums[j] !== undefined && nums[i]! > nums[j]!)
        throw AppError.badRequest(`${RESP_THRESH[i]} must not exceed ${RESP_THRESH[j]}`, RESP_THRESH[i]);
}

/** The level of the response time against respThreshMin/Maj/Cri (threshOn value only). */
function responseTimeLevel(c: MonitorConfig, ms: number): Severity | undefined {
  const n = (v: string | undefined) => (present(v) ? Number(v) : undefined);
  return thresholdLevel(ms, {
    threshMin: n(c.respThreshMin),
    threshMaj: n(c.respThreshMaj),
    threshCri: n(c.respThreshCri),
  });
}

/** Checks pattern, groups and comparison; returns the pattern's number of capture groups (0 without a pattern). */
function validateExtraction(c: MonitorConfig): number {
  const compiled = present(c.pattern) ? compileUserRegex(c.pattern, 'pattern') : undefined;
  if (present(c.matchIndex) && !/^\d+$/.test(c.matchIndex.trim())) {
    throw AppError.badRequest('matchIndex must be a non-negative integer', 'matchIndex');
  }
  if (present(c.matchIndex) && compiled && Number(c.matchIndex) > compiled.groupCount) {
    throw AppError.badRequest(`matchIndex is beyond the pattern's ${compiled.groupCount} group(s)`, 'matchIndex');
  }
  if (present(c.matchGroupName)) {
    const name = c.matchGroupName.trim();
    if (!/^[A-Za-z_$][\w$]*$/.test(name))
      throw AppError.badRequest('matchGroupName is not a group name', 'matchGroupName');
    if (!compiled || !compiled.groupNames.includes(name)) {
      throw AppError.badRequest(`pattern has no group named '${name}'`, 'matchGroupName');
    }
  }
  if (present(c.patternComp)) {
    if (!isPatternComp(c.patternComp)) {
      throw AppError.badRequest(`patternComp must be one of: ${PATTERN_COMPS.join(', ')}`, 'patternComp');
    }
    if (!present(c.pattern)) throw AppError.badRequest('patternComp needs a pattern', 'pattern');
    if (c.patternCompValCri === undefined)
      throw AppError.badRequest('patternComp needs patternCompValCri', 'patternCompValCri');
    if (c.patternComp.startsWith('number') && toNumber(c.patternCompValCri) === undefined) {
      throw AppError.badRequest('patternCompValCri must be a number for a number comparison', 'patternCompValCri');
    }
  }
  return compiled?.groupCount ?? 0;
}

function validate(c: MonitorConfig, clientCertDir: string | undefined): void {
  validateHttpUrl(c.api, 'api');
  c.typeApi = (c.typeApi ?? '').trim().toUpperCase() || 'GET';
  if (!(API_METHODS as readonly string[]).includes(c.typeApi)) {
    throw AppError.badRequest(`typeApi must be one of: ${API_METHODS.join(', ')} (any case)`, 'typeApi');
  }
  validateThresholds(c, validateExtraction(c));
  parseHeaders(c.headers, 'headers');
  parseBool(c.ignoreTlsErrors, 'ignoreTlsErrors');
  if (present(c.caCert)) validateCaCert(c.caCert);
  if (present(c.basicAuthPwd) && !present(c.basicAuthUser)) {
    throw AppError.badRequest('basicAuthPwd needs basicAuthUser', 'basicAuthUser');
  }
  if (present(c.clientCert) && !present(c.clientCertKey))
    throw AppError.badRequest('clientCert needs clientCertKey', 'clientCertKey');
  if (present(c.clientCertKey) && !present(c.clientCert))
    throw AppError.badRequest('clientCertKey needs clientCert', 'clientCert');
  if (present(c.clientCert) && present(c.clientCertKey))
    validateClientCert(c.clientCert, c.clientCertKey, clientCertDir);
}

function requestHeaders(c: MonitorConfig, body: string | undefined): Record<string, string> {
  const headers = parseHeaders(c.headers);
  const hasType = Object.keys(headers).some((k) => k.toLowerCase() === 'content-type');
  if (body !== undefined && !hasType) {
    let json = false;
    try {
      JSON.parse(body);
      json = true;
    } catch {
      json = false;
    }
    headers['content-type'] = json ? 'application/json' : 'text/plain; charset=utf-8';
  }
  return headers;
}

type Judged = Pick<CheckResult, 'outcome' | 'message' | 'severity'> & { extracted?: string; extractedNumber?: number };

/** Pattern, extraction and comparison on the body text; returns the outcome parts. */
async function judgeBody(regex: RegexRunner, c: MonitorConfig, text: RegexInput, signal: AbortSignal): Promise<Judged> {
  if (!present(c.pattern)) return { outcome: 'up' };
  const run = await regex.exec(c.pattern, text, signal);
  if (!run.ok) return { outcome: 'exception', message: run.error };
  if (run.match === null) return { outcome: 'error', message: 'pattern not found in the response body' };
  const got = extractValue(run.match, { matchGroupName: c.matchGroupName?.trim(), matchIndex: c.matchIndex?.trim() });
  if (got.value === undefined) return { outcome: 'error', message: got.error };
  const extracted = got.value;
  const extractedNumber = toNumber(extracted);
  if (!present(c.patternComp)) return { outcome: 'up', extracted, extractedNumber };
  const cmp = compareValue(extracted, c.patternComp, c.patternCompValCri ?? '');
  if (cmp.error) return { outcome: 'error', message: cmp.error, extracted, extractedNumber };
  const shown = extracted.length > 100 ? `${extracted.slice(0, 100)}…` : extracted;
  if (!cmp.matched) return { outcome: 'up', extracted, extractedNumber, message: `value '${shown}'` };
  return {
    outcome: 'up',
    severity: 'CRITICAL',
    message: `value '${shown}' ${c.patternComp} ${c.patternCompValCri ?? ''}`,
    extracted,
    extractedNumber,
  };
}

export interface ApiTypeOptions {
  /** Runs `pattern` (shared with the other types that match regexes). */
  regex: RegexRunner;
  /** The data folder; client certificate file names are read from its client-certs/ folder only. */
  dataDir?: string;
}

export function createApiType(opts: ApiTypeOptions): MonitorType {
  const { regex } = opts;
  const clientCertDir = opts.dataDir === undefined ? undefined : path.join(opts.dataDir, CLIENT_CERT_DIR);
  return {
    id: 'api',
    fields,
    required: ['api'],
    secretFields: ['basicAuthPwd', 'clientCert', 'clientCertKey'],
    embeddedSecrets: { api: urlUserinfo, headers: headerValues },
    secretTarget: (c) => ({ api: httpOrigin(c.api) }),
    endpoint: (c) => httpEndpoint(c.api),
    defaults: { typeApi: 'GET' },
    absentMeans: { threshOn: 'responseTime' },
    validate: (c) => validate(c, clientCertDir),
    thresholdsOn: (c) => (c.threshOn === 'value' ? 'value' : 'responseTime'),
    async check(c: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
      const url = (c.api ?? '').trim();
      const isHttps = url.toLowerCase().startsWith('https:');
      const clientCert =
        present(c.clientCert) && present(c.clientCertKey)
          ? await loadClientCert(c.clientCert, c.clientCertKey, clientCertDir)
          : undefined;
      if (typeof clientCert === 'string') return { outcome: 'exception', responseTimeMs: 0, message: clientCert };
      const method = (c.typeApi ?? 'GET').toUpperCase();
      const body = (method === 'POST' || method === 'PUT') && c.body !== undefined ? c.body : undefined;
      const p = await probeHttp({
        url,
        method,
        headers: requestHeaders(c, body),
        body,
        basicAuth: present(c.basicAuthUser) ? { user: c.basicAuthUser, password: c.basicAuthPwd ?? '' } : undefined,
        clientCert,
        ignoreTlsErrors: c.ignoreTlsErrors?.trim().toLowerCase() === 'true',
        extraCa: present(c.caCert) ? c.caCert : undefined,
        signal: ctx.signal,
        policy: ctx.policy,
        timeoutMs: ctx.timeoutMs,
      });
      const v = judgeAnswer(p, ctx.now(), isHttps);
      if (v.result) return v.result;
      const { answer, base } = v;
      const ct = answer.headers['content-type'];
      // The body becomes a string here only to be parsed (declared JSON/XML); the pattern decodes it in its worker.
      const parsable = declaredFormat(ct) !== 'text' && !answer.bodyTruncated;
      const parsed = parseBody(ct, parsable ? answer.body.toString('utf8') : '', answer.bodyTruncated);
      base.details.bodyFormat = parsed.format;
      if (parsed.error) return { ...base, outcome: 'error', message: parsed.error };
      const judged = await judgeBody(regex, c, answer.body, ctx.signal);
      if (judged.extracted !== undefined) base.details.extracted = judged.extracted;
      if (judged.extractedNumber !== undefined) base.metrics.extractedValue = judged.extractedNumber;
      const message = judged.message ?? `HTTP ${answer.statusCode}`;
      if (c.threshOn !== 'value')
        return { ...base, outcome: judged.outcome, severity: judged.severity ?? base.severity, message };
      // Thresholds compare the extracted number (none this run when it is not a number); the response time is
      // judged against its own thresholds, and the worst level wins.
      const severity = worst(worst(judged.severity, base.severity), responseTimeLevel(c, base.responseTimeMs));
      const thresholdValue = judged.extractedNumber ?? null;
      if (thresholdValue === null && judged.extracted !== undefined)
        base.details.thresholdNote = 'the extracted value is not a number: threshMin/Maj/Cri not applied';
      return { ...base, outcome: judged.outcome, severity, message, thresholdValue };
    },
  };
}

/** A default instance (its regex worker starts on first use; no client-certs folder): tests and benches. */
export const apiType: MonitorType = createApiType({ regex: createRegexRunner() });
export default apiType;
