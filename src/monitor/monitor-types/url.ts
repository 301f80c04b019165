/**
 * url: one GET over a fresh connection per check, as a browser's first visit sees it. Facts: status code (>= 400 →
 * error), optional body `pattern` (absent → error), timings (dns, connect, tls, first byte, total), redirects, and for
 * HTTPS the certificate's days to expiry with its level (< 30 d MINOR, < 14 d MAJOR, < 7 d or expired CRITICAL).
 * The pattern runs on RE2 semantics off the event loop (lib/safe-regex.ts). See docs/checks-http.md.
 */
import { Type } from '@sinclair/typebox';
import { Choice } from '../../core/http/schemas.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType } from './types.js';
import { httpEndpoint, httpOrigin, judgeAnswer, parseBool, present, validateHttpUrl } from './lib/http-check.js';
import { urlUserinfo } from './lib/credentials.js';
import { probeHttp } from './lib/http-probe.js';
import { compileUserRegex, createRegexRunner, type RegexInput, type RegexRunner } from './lib/safe-regex.js';
import { validateCaCert } from './lib/ca-cert.js';

const fields = Type.Object({
  url: Type.String({
    description: 'Target URL (http or https), fetched with GET over a fresh connection',
    example: 'https://example.com/health',
  }),
  pattern: Type.Optional(
    Type.String({
      description:
        'Optional regular expression (RE2 semantics: no backreferences or lookaround) that must match the response body (first 1 MiB)',
    }),
  ),
  ignoreTlsErrors: Type.Optional(
    Choice(['true', 'false'], {
      optional: true,
      anyCase: true,
      description: '"true" to accept an untrusted or mismatched certificate (default "false")',
    }),
  ),
  caCert: Type.Optional(
    Type.String({
      description:
        'PEM CA certificate(s) to trust in addition to the system store (a private CA), at most 20 and 64 KiB',
      maxLength: 65_536,
    }),
  ),
});

/** Matches a body pattern; the result is undefined when it matched, else the failing CheckResult parts. */
export async function matchBody(
  regex: RegexRunner,
  pattern: string,
  text: RegexInput,
  signal?: AbortSignal,
): Promise<{ outcome: 'error' | 'exception'; message: string } | undefined> {
  const run = await regex.test(pattern, text, signal);
  if (!run.ok) return { outcome: 'exception', message: run.error };
  if (!run.found) return { outcome: 'error', message: 'pattern not found in the response body' };
  return undefined;
}

export function createUrlType(regex: RegexRunner): MonitorType {
  return {
    id: 'url',
    fields,
    required: ['url'],
    // The spec requires these common fields for url monitors (and for no other type).
    requiredCommon: ['display_name', 'sched', 'state', 'probe'],
    secretFields: [],
    embeddedSecrets: { url: urlUserinfo },
    secretTarget: (c) => ({ url: httpOrigin(c.url) }),
    endpoint: (c) => httpEndpoint(c.url),
    validate(config: MonitorConfig): void {
      validateHttpUrl(config.url, 'url');
      if (present(config.pattern)) compileUserRegex(config.pattern, 'pattern');
      parseBool(config.ignoreTlsErrors, 'ignoreTlsErrors');
      if (present(config.caCert)) validateCaCert(config.caCert);
    },
    async check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
      const url = (config.url ?? '').trim();
      const isHttps = url.toLowerCase().startsWith('https:');
      const p = await probeHttp({
        url,
        method: 'GET',
        ignoreTlsErrors: config.ignoreTlsErrors?.trim().toLowerCase() === 'true',
        extraCa: present(config.caCert) ? config.caCert : undefined,
        signal: ctx.signal,
        policy: ctx.policy,
        timeoutMs: ctx.timeoutMs,
      });
      const v = judgeAnswer(p, ctx.now(), isHttps);
      if (v.result) return v.result;
      const { answer, base } = v;
      if (present(config.pattern)) {
        const failed = await matchBody(regex, config.pattern, answer.body, ctx.signal);
        if (failed) return { ...base, ...failed };
      }
      return { ...base, outcome: 'up', message: `HTTP ${answer.statusCode}` };
    },
  };
}

/** A default instance (its regex worker starts on first use): tests and benches. */
export const urlType: MonitorType = createUrlType(createRegexRunner());
export default urlType;
