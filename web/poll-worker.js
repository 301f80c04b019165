// Live updates for the overview: polls GET /monitors off the main thread (fetch + JSON parse of thousands of
// monitors would otherwise block scrolling), diffs against the previous answer and posts only what changed.
// EventSource cannot send the Authorization header, so this is polling; the interval adapts to the list size
// (at least 3 × the time the last poll took, never under minIntervalMs).
// @ts-check
/** @typedef {import('./types.js').MonitorSummary} MonitorSummary */

/** @type {string | null | undefined} */
let token = null;
let minIntervalMs = 5000;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
let running = false;
/** @type {Map<string, string>}  name → sig() of the previous answer */
let prev = new Map();

/**
 * What makes a row change on the overview.
 * @param {MonitorSummary} m
 */
function sig(m) {
  const l = m.last;
  return `${m.updatedMs}|${m.state}|${l ? `${l.ts}|${l.status}` : '-'}|${m.nextDueMs ?? ''}`;
}

/** @param {import('./types.js').PollReport} r */
function report(r) {
  postMessage(r);
}

async function poll() {
  clearTimeout(timer);
  if (!token || running) return;
  running = true;
  const t0 = performance.now();
  let nextMs = minIntervalMs;
  try {
    const res = await fetch('/monitors', { headers: { authorization: `Bearer ${token}` }, cache: 'no-store' });
    if (res.status === 401) {
      report({ type: 'unauthorized' });
      token = null;
      return;
    }
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    /** @type {unknown} */
    const answer = await res.json();
    const list = /** @type {MonitorSummary[]} */ (answer);
    const first = prev.size === 0;
    /** @type {Map<string, string>} */
    const next = new Map();
    /** @type {MonitorSummary[]} */
    const changed = [];
    for (const m of list) {
      const s = sig(m);
      next.set(m.name, s);
      if (first || prev.get(m.name) !== s) changed.push(m);
    }
    /** @type {string[]} */
    const removed = [];
    for (const name of prev.keys()) if (!next.has(name)) removed.push(name);
    prev = next;
    report({
      type: first ? 'full' : 'delta',
      changed,
      removed,
      total: list.length,
      tookMs: performance.now() - t0,
    });
    nextMs = Math.max(minIntervalMs, 3 * (performance.now() - t0));
  } catch (e) {
    report({ type: 'error', message: String(/** @type {{ message?: unknown } | undefined} */ (e)?.message || e) });
    nextMs = Math.max(minIntervalMs, 10_000);
  } finally {
    running = false;
    if (token) timer = setTimeout(poll, nextMs);
  }
}

onmessage = (/** @type {MessageEvent<import('./types.js').PollCommand>} */ ev) => {
  const msg = ev.data;
  if (msg.type === 'start') {
    token = msg.token;
    minIntervalMs = msg.intervalMs ?? minIntervalMs;
    prev = new Map();
    void poll();
  } else if (msg.type === 'token') {
    token = msg.token;
  } else if (msg.type === 'now') {
    void poll();
  } else if (msg.type === 'stop') {
    token = null;
    clearTimeout(timer);
    prev = new Map();
  }
};
