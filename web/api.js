// The session (token in memory only) and the JSON API client. Every API call carries the bearer token; a 401 ends
// the session (back to the login page). Errors keep the server's body {code, error, message, field}.
// @ts-check
import { signal } from './store.js';

/** @typedef {{ message?: string, error?: string, field?: string }} ErrorBody  the server's error body */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {ErrorBody | null | undefined} body
   */
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error;
    /** e.g. "body.port" */
    this.field = body?.field;
  }
}

/** @typedef {{ token: string, username: string, role: 'admin' | 'user' | 'readonly', expireMs: number }} Session */

/** session: null when logged out. */
export const session = signal(/** @type {Session | null} */ (null));
/** @type {ReturnType<typeof setTimeout> | undefined} */
let refreshTimer;

/**
 * The parsed JSON answer (text when it is not JSON). Its shape depends on the path: the caller names it, T, with a
 * type of types.d.ts (the server's OpenAPI schemas) on the variable it awaits into or on the promise; unnamed, it is
 * unknown. The service is trusted to answer as its schema says: nothing checks it here.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function request(method, path, body) {
  const s = session.get();
  /** @type {Record<string, string>} */
  const headers = {};
  const token = s?.token ?? pendingToken;
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (e) {
    throw new ApiError(0, { message: `network error: ${/** @type {Error} */ (e).message}` });
  }
  const text = await res.text();
  /** @type {unknown} */
  let data = text;
  if ((res.headers.get('content-type') || '').includes('json') && text) data = JSON.parse(text);
  if (res.status === 401 && s && path !== '/login') {
    logout('Your session has ended. Please log in again.');
  }
  if (!res.ok)
    throw new ApiError(
      res.status,
      typeof data === 'object' ? /** @type {ErrorBody | null} */ (data) : { message: text },
    );
  return /** @type {T} */ (data);
}

/** request() per method; T: the answer's type (see request). */
export const api = {
  /**
   * @template [T=unknown]
   * @param {string} p
   * @returns {Promise<T>}
   */
  get: (p) => request('GET', p),
  /**
   * @template [T=unknown]
   * @param {string} p
   * @param {unknown} [b]
   * @returns {Promise<T>}
   */
  post: (p, b) => request('POST', p, b),
  /**
   * @template [T=unknown]
   * @param {string} p
   * @param {unknown} b
   * @returns {Promise<T>}
   */
  patch: (p, b) => request('PATCH', p, b),
  /**
   * @template [T=unknown]
   * @param {string} p
   * @returns {Promise<T>}
   */
  del: (p) => request('DELETE', p),
};

/**
 * Group of the logged-in user, from GET /api/me.
 * @returns {Promise<Session['role']>}
 */
async function inferRole() {
  /** @type {import('./types.js').Me} */
  const me = await api.get('/api/me');
  return me.group;
}

export let logoutReason = '';
/** @type {string | null} */
let pendingToken = null;

/**
 * @param {string} username
 * @param {string} password
 */
export async function login(username, password) {
  /** @type {import('./types.js').LoginAnswer} */
  const r = await request('POST', '/login', { username, password });
  pendingToken = r.token;
  try {
    const role = await inferRole();
    logoutReason = '';
    session.set({ token: r.token, username, role, expireMs: Date.parse(r.expire) });
  } finally {
    pendingToken = null;
  }
  scheduleRefresh();
}

/** Swaps the token for a fresh one 5 minutes before it expires (the session stays alive while the tab is open). */
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  const s = session.get();
  if (!s) return;
  const inMs = Math.max(10_000, s.expireMs - Date.now() - 300_000);
  refreshTimer = setTimeout(
    async () => {
      try {
        /** @type {import('./types.js').LoginAnswer} */
        const r = await api.get('/refresh_token');
        const cur = session.get();
        if (cur) session.set({ ...cur, token: r.token, expireMs: Date.parse(r.expire) });
        scheduleRefresh();
      } catch {
        const cur = session.get();
        if (cur && Date.now() >= cur.expireMs) logout('Your session has expired.');
        else refreshTimer = setTimeout(scheduleRefresh, 30_000);
      }
    },
    Math.min(inMs, 2 ** 31 - 1),
  );
}

export function logout(reason = '') {
  clearTimeout(refreshTimer);
  logoutReason = reason;
  session.set(null);
}

export const can = {
  write: () => ['admin', 'user'].includes(session.get()?.role ?? ''),
  admin: () => session.get()?.role === 'admin',
};

/** @type {Promise<import('./types.js').OpenApiDoc> | undefined} */
let openapi;
/**
 * The OpenAPI document (for the create/edit forms), fetched once.
 * @returns {Promise<import('./types.js').OpenApiDoc>}
 */
export function openApiDoc() {
  openapi ??= fetch('/docs/index.html/json', { cache: 'no-store' })
    .then((r) => {
      if (!r.ok) throw new ApiError(r.status, { message: 'cannot load the API description' });
      return r.json();
    })
    .catch((e) => {
      openapi = undefined;
      throw e;
    });
  return openapi;
}

/** The monitor types the service has: every `/<type>/create` path of its OpenAPI document, in document order. */
export async function monitorTypes() {
  const doc = await openApiDoc();
  return Object.keys(doc.paths)
    .map((p) => /^\/([a-z]+)\/create$/.exec(p)?.[1])
    .filter((t) => t !== undefined);
}
