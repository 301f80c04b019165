/** Redirect rules of the HTTP probe: next request, credential scoping to the original origin, URL redaction. */
import type { Hop } from './http-probe.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Header names never sent to another origin than the monitor's own (core/http/credential-fields.ts); their values
 * are also sealed at rest and shown as `***` (lib/credentials.ts). */
export { isSensitiveHeader } from '../../../core/http/credential-fields.js';

/** The host to connect to: brackets of an IPv6 literal removed. */
export function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** The URL without its userinfo (what results and messages may show). */
export function redactUrl(url: URL | string): string {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return '(invalid URL)';
  }
  if (u.username === '' && u.password === '') return u.href;
  u = new URL(u.href);
  u.username = '';
  u.password = '';
  return u.href;
}

/**
 * The request that follows a redirect: 303 → GET without body; 301/302 after POST → GET without body (as browsers do);
 * 307/308 keep method and body. Credentials and client certificates only while the target's origin is the original one.
 */
export function nextRequest(hop: Hop, statusCode: number, location: string, originalOrigin: string): Hop {
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    throw new Error(`redirect to an invalid URL: ${location.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`redirect to unsupported scheme '${url.protocol.replace(':', '')}'`);
  }
  url.hash = '';
  let { method, body } = hop;
  const headers = { ...hop.headers };
  const toGet = statusCode === 303 || ((statusCode === 301 || statusCode === 302) && method === 'POST');
  if (REDIRECT_STATUSES.has(statusCode) && toGet && method !== 'HEAD') {
    method = 'GET';
    body = undefined;
    for (const k of Object.keys(headers)) {
      if (/^content-(type|length|encoding|language)$/i.test(k)) delete headers[k];
    }
  }
  return { url, method, headers, body, withCredentials: url.origin === originalOrigin };
}
