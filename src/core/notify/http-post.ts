/**
 * The one HTTPS request every HTTP channel shares: a body (JSON, form or text), a hard timeout, a bounded response
 * read, and the retry classification of the channel contract: 429 (with Retry-After) and 5xx and network errors are
 * retryable ChannelErrors, other non-2xx statuses are not.
 *
 * Error messages never contain the URL (webhook URLs carry their secret in the path) nor the request body.
 */
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { ChannelError } from './channel.js';

export interface HttpPostOptions {
  timeoutMs: number;
  /** Default POST. */
  method?: string;
  signal?: AbortSignal;
  /** Agent carrying a CA for tests, or keep-alive settings. */
  agent?: https.Agent;
  headers?: Record<string, string>;
}

export interface HttpPostResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  latencyMs: number;
}

const MAX_BODY_BYTES = 64 * 1024;
/** Retry-After values beyond this are capped (a misbehaving endpoint must not park alerts for days). */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** Parses Retry-After (delta seconds or an HTTP date) into ms from now; undefined when absent or malformed. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  let ms: number;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS);
}

/** Validates a URL setting: https only. Returns the reason when invalid. */
export function invalidHttpsUrl(value: string | undefined): string | undefined {
  if (!value) return 'is required';
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be a URL';
  }
  if (u.protocol !== 'https:') return 'must be an https:// URL';
  return undefined;
}

/**
 * Sends `body` (with the content type given in opts.headers); resolves with any HTTP status; rejects with a retryable
 * ChannelError on network error or timeout. A GET sends no body.
 */
export function httpRequest(
  url: string,
  payload: string | Buffer | undefined,
  vendor: string,
  opts: HttpPostOptions,
): Promise<HttpPostResult> {
  const body = payload === undefined ? undefined : Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const started = performance.now();
  if (invalidHttpsUrl(url))
    return Promise.reject(new ChannelError(`${vendor}: the configured URL is not https`, false));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: ChannelError): void => {
      if (settled) return;
      settled = true;
      req?.destroy();
      reject(err);
    };
    let req: ReturnType<typeof https.request> | undefined;
    try {
      req = open();
    } catch (err) {
      // A header value with a control character and the like: a settings problem, not worth a retry.
      reject(
        new ChannelError(`${vendor}: invalid request (${(err as NodeJS.ErrnoException).code ?? 'bad input'})`, false),
      );
      return;
    }
    function open(): ReturnType<typeof https.request> {
      return https.request(
        url,
        {
          method: opts.method ?? 'POST',
          agent: opts.agent,
          headers: body ? { 'content-length': String(body.length), ...opts.headers } : { ...opts.headers },
          timeout: opts.timeoutMs,
          signal: opts.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (size < MAX_BODY_BYTES) chunks.push(c);
            size += c.length;
          });
          res.on('error', () => fail(new ChannelError(`${vendor}: response aborted`, true)));
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY_BYTES),
              latencyMs: performance.now() - started,
            });
          });
        },
      );
    }
    // Overall deadline (the socket `timeout` only covers idleness).
    const timer = setTimeout(
      () => fail(new ChannelError(`${vendor}: timed out after ${opts.timeoutMs} ms`, true)),
      opts.timeoutMs,
    );
    req.on('timeout', () => fail(new ChannelError(`${vendor}: timed out after ${opts.timeoutMs} ms`, true)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const reason = opts.signal?.aborted ? 'aborted' : (err.code ?? 'network error');
      fail(new ChannelError(`${vendor}: request failed (${reason})`, true));
    });
    req.on('close', () => clearTimeout(timer));
    req.end(body);
  });
}

/** Throws the ChannelError a non-2xx answer means; returns for 2xx. `detail` is a short vendor error text. */
export function assertOk(res: HttpPostResult, vendor: string, nowMs: number): void {
  if (res.status >= 200 && res.status < 300) return;
  const detail = res.body.replace(/\s+/g, ' ').trim().slice(0, 200);
  const msg = `${vendor}: HTTP ${res.status}${detail ? ` ${detail}` : ''}`;
  if (res.status === 429) throw new ChannelError(msg, true, parseRetryAfter(res.headers['retry-after'], nowMs));
  if (res.status >= 500) throw new ChannelError(msg, true, parseRetryAfter(res.headers['retry-after'], nowMs));
  if (res.status === 408) throw new ChannelError(msg, true);
  throw new ChannelError(msg, false);
}
