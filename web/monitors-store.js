// Every monitor's summary (GET /monitors), kept live by the poll worker. Views subscribe to `version` and read `byName`.
// @ts-check
import { signal } from './store.js';
import { session, logout } from './api.js';

/** @typedef {import('./types.js').MonitorSummary} MonitorSummary  a monitor as GET /monitors lists it */
/** @typedef {{ loaded: boolean, total: number, changed: Set<string> | null, error: string }} MonitorsVersion */

/** @type {Map<string, MonitorSummary>} */
export const byName = new Map();
/** Bumps on every change; changed: the names that changed, null = everything. */
export const monitorsVersion = signal(
  /** @type {MonitorsVersion} */ ({ loaded: false, total: 0, changed: null, error: '' }),
);
/** @type {Worker | undefined} */
let worker;

/** @param {number | undefined} intervalMs */
export function startPolling(intervalMs) {
  stopPolling();
  worker = new Worker(new URL('./poll-worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = (/** @type {MessageEvent<import('./types.js').PollReport>} */ ev) => {
    const msg = ev.data;
    if (msg.type === 'unauthorized') return logout('Your session has ended. Please log in again.');
    if (msg.type === 'error') return monitorsVersion.set({ ...monitorsVersion.get(), error: msg.message });
    if (msg.type === 'full') byName.clear();
    for (const m of msg.changed) byName.set(m.name, m);
    for (const n of msg.removed) byName.delete(n);
    const changed = msg.type === 'full' ? null : new Set([...msg.changed.map((m) => m.name), ...msg.removed]);
    monitorsVersion.set({ loaded: true, total: byName.size, changed, error: '' });
  };
  post({ type: 'start', token: session.get()?.token, intervalMs });
}

/** @param {import('./types.js').PollCommand} cmd */
function post(cmd) {
  worker?.postMessage(cmd);
}

/** Ask for a poll now (after a create, run, enable...). */
export function refreshNow() {
  post({ type: 'now' });
}

/** @param {string} token */
export function updateToken(token) {
  post({ type: 'token', token });
}

/** Apply a known change at once (e.g. the monitor returned by enable/disable) until the next poll confirms it. */
/**
 * @param {string} name
 * @param {Partial<MonitorSummary>} patch
 */
export function patchMonitor(name, patch) {
  const m = byName.get(name);
  if (!m) return;
  byName.set(name, { ...m, ...patch });
  monitorsVersion.set({ ...monitorsVersion.get(), changed: new Set([name]) });
}

export function stopPolling() {
  post({ type: 'stop' });
  worker?.terminate();
  worker = undefined;
  byName.clear();
  monitorsVersion.set({ loaded: false, total: 0, changed: null, error: '' });
}
