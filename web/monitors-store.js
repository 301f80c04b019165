// Every monitor's summary (GET /monitors), kept live by the poll worker. Views subscribe to `version` and read `byName`.
// @ts-check
import { signal } from './store.js';
import { session, logout } from './api.js';

/** A monitor's summary as GET /monitors lists it (name, type, sched, state, last, ...). */
/** @typedef {{ name: string, [field: string]: any }} MonitorSummary */
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
  worker.onmessage = (ev) => {
    const msg = ev.data;
    if (msg.type === 'unauthorized') return logout('Your session has ended. Please log in again.');
    if (msg.type === 'error') return monitorsVersion.set({ ...monitorsVersion.get(), error: msg.message });
    if (msg.type === 'full') byName.clear();
    for (const m of msg.changed) byName.set(m.name, m);
    for (const n of msg.removed) byName.delete(n);
    const changed = msg.type === 'full' ? null : new Set([...msg.changed.map((m) => m.name), ...msg.removed]);
    monitorsVersion.set({ loaded: true, total: byName.size, changed, error: '' });
  };
  worker.postMessage({ type: 'start', token: session.get()?.token, intervalMs });
}

/** Ask for a poll now (after a create, run, enable...). */
export function refreshNow() {
  worker?.postMessage({ type: 'now' });
}

/** @param {string} token */
export function updateToken(token) {
  worker?.postMessage({ type: 'token', token });
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
  worker?.postMessage({ type: 'stop' });
  worker?.terminate();
  worker = undefined;
  byName.clear();
  monitorsVersion.set({ loaded: false, total: 0, changed: null, error: '' });
}
