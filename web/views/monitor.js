// Monitor page: header + actions, the open problem (acknowledge with a note / remove the acknowledgement), status
// timeline with range picker, response-time chart, trend cards, run-now output, recent runs (error text; exec steps
// with durations and artifact links).
// @ts-check
import {
  h,
  setChildren,
  statusPill,
  effectiveStatus,
  fmtMs,
  fmtTime,
  fmtAgo,
  fmtPct,
  parseTags,
  toast,
  confirmDialog,
  debounce,
} from '../util.js';
import { api, can } from '../api.js';
import { byName, monitorsVersion, refreshNow, patchMonitor } from '../monitors-store.js';
import { drawTimeline, drawResponseChart } from '../charts.js';
import { originText, renderResult } from './result.js';
import { renderPushCard } from './push-card.js';

/** @typedef {import('../api.js').ApiError} ApiError */
/** @typedef {import('../types.js').MonitorDetails} MonitorDetails */
/** @typedef {import('../types.js').MonitorView} MonitorView */
/** @typedef {import('../types.js').Problem} Problem */

/** @type {Record<string, number>} */
const RANGES = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/**
 * @param {HTMLElement} root
 * @param {string} type
 * @param {string} sched
 * @param {string} name
 */
export function mountMonitor(root, type, sched, name) {
  const enc = encodeURIComponent(name);
  let range = { key: '24h', start: 0, end: 0 };
  /** @type {MonitorDetails | null} */
  let details = null;
  let alive = true;
  const headerBox = h('div.mon-head');
  const actions = h('div.actions');
  const problemBox = h('div.card.problem#problem', { hidden: true, role: 'status' });
  const pushBox = h('div.card#push-card', { hidden: true });
  // What the discovery agent of the target host found on failing runs (GET /enrichments/{name}), newest first.
  const agentBox = h('div.card.agent-found#agent-found', { hidden: true });
  /** @type {import('../types.js').Enrichment[]} */
  let found = [];
  const timelineCanvas = h('canvas.timeline', { role: 'img', 'aria-label': 'Status timeline' });
  const shares = h('div.shares');
  const chartCanvas = h('canvas.chart', { role: 'img', 'aria-label': 'Response time chart' });
  const tip = h('div.tip', { hidden: true });
  const chartBox = h('div.chart-box', chartCanvas, tip);
  const chartNote = h('p.muted.small');
  const trendBox = h('div.trends');
  const runOut = h('div.run-out', { hidden: true });
  const recentBox = h('div.recent');
  const customFrom = h('input', { type: 'datetime-local', 'aria-label': 'From' });
  const customTo = h('input', { type: 'datetime-local', 'aria-label': 'To' });
  const customBox = h(
    'span.custom',
    { hidden: true },
    customFrom,
    customTo,
    h('button.btn.small', { type: 'button', onclick: applyCustom }, 'Apply'),
  );
  const rangeBtns = Object.keys(RANGES).map((k) =>
    h('button.seg', { type: 'button', 'aria-pressed': String(k === range.key), onclick: () => setRange(k) }, k),
  );
  const customBtn = h(
    'button.seg',
    {
      type: 'button',
      'aria-pressed': 'false',
      onclick: () => {
        customBox.hidden = false;
        setPressed('custom');
      },
    },
    'Custom',
  );

  root.append(
    h(
      'section.page.monitor',
      h('p.crumbs', h('a', { href: '#/' }, '← Monitors')),
      headerBox,
      actions,
      problemBox,
      pushBox,
      agentBox,
      runOut,
      h(
        'div.card',
        h(
          'div.card-head',
          h('h2', 'Status timeline'),
          h('div.segs', { role: 'group', 'aria-label': 'Time range' }, rangeBtns, customBtn),
          customBox,
        ),
        timelineCanvas,
        shares,
      ),
      h('div.card', h('div.card-head', h('h2', 'Response time')), chartBox, chartNote),
      h('div.card', h('h2', 'Trend'), trendBox),
      h('div.card', h('h2', 'Recent runs'), recentBox),
    ),
  );

  /** @param {string} k  a range key or 'custom' */
  function setPressed(k) {
    for (const b of [...rangeBtns, customBtn])
      b.setAttribute('aria-pressed', String(b.textContent === k || (k === 'custom' && b === customBtn)));
  }
  /** @param {string} k */
  function setRange(k) {
    range = { key: k, start: 0, end: 0 };
    customBox.hidden = true;
    setPressed(k);
    void loadGraphs();
  }
  function applyCustom() {
    const s = Date.parse(customFrom.value);
    const e = Date.parse(customTo.value);
    if (!Number.isFinite(s) || !Number.isFinite(e) || e <= s) return toast('Pick a start before the end.', 'error');
    range = { key: 'custom', start: s, end: e };
    void loadGraphs();
  }
  function window_() {
    if (range.key === 'custom') return [range.start, range.end];
    const end = Date.now();
    return [end - RANGES[range.key], end];
  }

  function renderHeader() {
    const m = byName.get(name) || details?.monitor;
    if (!m) return;
    const merged = { ...details?.monitor, ...m };
    const status = effectiveStatus({ ...merged, last: byName.get(name)?.last ?? details?.last });
    const last = byName.get(name)?.last ?? details?.last;
    const target = merged.url || merged.api || merged.ip || merged.domain || merged.dbIp || '';
    setChildren(
      headerBox,
      h('div.title-row', h('h1', merged.display_name || name), statusPill(status)),
      h(
        'dl.facts',
        fact('Name', name),
        fact('Type', merged.type),
        target ? fact('Target', target) : null,
        fact('Schedule', merged.sched === 'CRON' ? `cron ${merged.schedCron}` : merged.sched),
        fact('Probe', merged.probe),
        merged.location ? fact('Location', merged.location) : null,
        parseTags(merged.tags).length ? fact('Tags', parseTags(merged.tags).join(', ')) : null,
        merged.createdBy ? fact('Created by', merged.createdBy) : null,
        merged.updatedBy ? fact('Changed by', `${merged.updatedBy} · ${fmtTime(merged.updatedMs)}`) : null,
        merged.managedBy
          ? fact('Managed by', `${merged.managedBy} (sentinel apply: edits here are overwritten)`)
          : null,
        fact('Last run', last ? `${fmtAgo(last.ts)} · ${fmtMs(last.responseTimeMs)}` : 'never'),
        originText(last) ? fact('Last ran on', originText(last)) : null,
        details?.schedule?.nextDueMs ? fact('Next run', fmtTime(details.schedule.nextDueMs)) : null,
      ),
      last?.message && status !== 'OK' ? h('p.err-text', last.message) : null,
    );
    renderActions(merged);
  }
  /**
   * @param {string} k
   * @param {string | undefined} v
   */
  function fact(k, v) {
    return [h('dt', k), h('dd', v ?? '–')];
  }

  /** @param {MonitorView} m */
  function renderActions(m) {
    if (!can.write()) return setChildren(actions);
    const on = m.state !== 'off';
    setChildren(
      actions,
      h('button.btn.primary#run-now', { type: 'button', onclick: runNow }, 'Run now'),
      h(`button.btn#toggle-state`, { type: 'button', onclick: () => toggle(on) }, on ? 'Disable' : 'Enable'),
      h('a.btn#edit', { href: `#/edit/${encodeURIComponent(m.type)}/${encodeURIComponent(m.sched)}/${enc}` }, 'Edit'),
      h('button.btn.danger#delete', { type: 'button', onclick: remove }, 'Delete'),
    );
  }

  /** @param {MouseEvent} ev */
  async function runNow(ev) {
    const btn = /** @type {HTMLButtonElement} */ (ev.currentTarget);
    btn.disabled = true;
    btn.textContent = 'Running…';
    try {
      /** @type {import('../types.js').RunAnswer} */
      const r = await api.get(`/monitor/run/${enc}/show`);
      runOut.hidden = false;
      setChildren(
        runOut,
        h(
          'div.card-head',
          h('h2', 'Run output'),
          h('button.btn.small', { type: 'button', onclick: () => (runOut.hidden = true) }, 'Close'),
        ),
        renderResult(r, name),
      );
      refreshNow();
      await loadDetails();
      void loadGraphs();
    } catch (e) {
      toast(`Run failed: ${/** @type {Error} */ (e).message}`, 'error');
    } finally {
      btn.disabled = false;
      btn.textContent = 'Run now';
    }
  }

  /** @param {boolean} on  the state now: true disables */
  async function toggle(on) {
    // Both buttons exist only once the header has rendered, from byName or the details.
    const m = byName.get(name) || /** @type {MonitorDetails} */ (details).monitor;
    try {
      /** @type {import('../types.js').SavedAnswer} */
      const r = await api.post(`/exec/${on ? 'disable' : 'enable'}/${encodeURIComponent(m.sched)}/${enc}`);
      patchMonitor(name, { state: on ? 'off' : 'on' });
      if (details) details.monitor = r.monitor || { ...details.monitor, state: on ? 'off' : 'on' };
      toast(r.message);
      refreshNow();
      renderHeader();
    } catch (e) {
      toast(/** @type {Error} */ (e).message, 'error');
    }
  }

  async function remove() {
    const m = byName.get(name) || /** @type {MonitorDetails} */ (details).monitor;
    if (
      !(await confirmDialog(
        `Delete ${name}?`,
        'The monitor and all its history are deleted. This cannot be undone.',
        'Delete',
      ))
    )
      return;
    try {
      await api.del(`/delete/exec/${encodeURIComponent(m.sched)}/${enc}`);
      toast(`${name} deleted`);
      refreshNow();
      location.hash = '#/';
    } catch (e) {
      toast(/** @type {Error} */ (e).message, 'error');
    }
  }

  async function loadProblem() {
    const list = await /** @type {Promise<Problem[]>} */ (api.get(`/alerting/problems?monitor=${enc}`)).catch(() => []);
    if (!alive) return;
    renderProblem(list[0]);
  }
  /** @param {Problem | undefined} p */
  function renderProblem(p) {
    problemBox.hidden = !p;
    if (!p) return setChildren(problemBox);
    const ack = p.acknowledged;
    const note = h('input#ack-note', {
      type: 'text',
      maxlength: 1000,
      placeholder: 'note (optional)',
      'aria-label': 'Note',
    });
    const write = can.write()
      ? ack
        ? h('button.btn.small#unack', { type: 'button', onclick: () => acknowledge(false) }, 'Remove acknowledgement')
        : h(
            'span.inline',
            note,
            h(
              'button.btn.small.primary#ack',
              { type: 'button', onclick: () => acknowledge(true, note.value) },
              'Acknowledge',
            ),
          )
      : null;
    setChildren(
      problemBox,
      h(
        'div.card-head',
        h('h2', 'Open problem ', statusPill(p.status)),
        p.openedMs ? h('span.muted.small', `since ${fmtTime(p.openedMs)}`) : null,
      ),
      ack
        ? h(
            'p.ack-line',
            `Acknowledged by ${ack.by} ${fmtAgo(ack.atMs)}`,
            ack.note ? `: ${ack.note}` : '',
            '. No reminders until it gets worse than ',
            ack.status,
            ' or recovers.',
          )
        : h('p.muted', 'Not acknowledged: reminders follow renotifyMinutes.'),
      write,
    );
  }
  /**
   * @param {boolean} on
   * @param {string} [note]
   */
  async function acknowledge(on, note) {
    try {
      /** @type {Problem} */
      const p = on
        ? await api.post(`/alerting/ack/${enc}`, note ? { note } : {})
        : await api.del(`/alerting/ack/${enc}`);
      toast(on ? `${name} acknowledged` : `Acknowledgement of ${name} removed`);
      renderProblem(p);
    } catch (e) {
      toast(/** @type {Error} */ (e).message, 'error');
      void loadProblem();
    }
  }

  async function loadFound() {
    found = await /** @type {Promise<import('../types.js').Enrichment[]>} */ (
      api.get(`/enrichments/${enc}?limit=10`)
    ).catch(() => []);
    if (!alive) return;
    agentBox.hidden = found.length === 0;
    const e = found[0];
    setChildren(
      agentBox,
      e
        ? [
            h(
              'div.card-head',
              h('h2', 'What the agent found'),
              h('span.muted.small', `${fmtAgo(e.atMs)} · agent ${e.agent}`),
            ),
            h('p.agent-summary', statusPill(e.status), ' ', e.summary),
          ]
        : [],
    );
    renderRecent();
  }

  async function loadDetails() {
    void loadProblem();
    void loadFound();
    try {
      const m = byName.get(name);
      details = /** @type {MonitorDetails} */ (
        await api.post('/getMonitorDetails', { type, name, sched: m?.sched || sched })
      );
      if (!alive) return;
      renderHeader();
      renderPushCard(pushBox, details, { type, sched: details.monitor?.sched || sched, name });
      renderRecent();
    } catch (e) {
      if (!alive) return;
      setChildren(
        headerBox,
        h('h1', name),
        h(
          'p.form-error',
          { role: 'alert' },
          /** @type {ApiError} */ (e).status === 404
            ? 'This monitor does not exist (any more).'
            : /** @type {Error} */ (e).message,
        ),
      );
    }
  }

  function renderRecent() {
    const rows = details?.recent || [];
    if (!rows.length) return setChildren(recentBox, h('p.muted', 'No runs yet.'));
    const foundAt = new Map(found.map((e) => [e.ts, e.summary]));
    setChildren(
      recentBox,
      h(
        'ul.runs',
        rows.map((r) =>
          h(
            'li.run',
            h(
              'div.run-line',
              statusPill(r.status),
              h('span.run-time', fmtTime(r.ts)),
              h('span.run-rt', fmtMs(r.responseTimeMs)),
              h('span.run-origin.muted', { title: 'probe · location · instance' }, originText(r) || '–'),
              r.message ? h(`span.run-msg${r.status === 'OK' ? '.ok' : ''}`, r.message) : null,
            ),
            foundAt.has(r.ts) ? h('div.run-agent.muted.small', foundAt.get(r.ts)) : null,
            r.details?.steps
              ? h('details', h('summary', `${r.details.steps.length} steps`), renderResult(r, name, true))
              : null,
          ),
        ),
      ),
    );
  }

  let graphSeq = 0;
  async function loadGraphs() {
    const seq = ++graphSeq;
    const [start, end] = window_();
    const path = `${type}/${enc}/${Math.floor(start)}/${Math.ceil(end)}`;
    const w = chartBox.clientWidth || 600;
    const points = Math.min(1000, Math.max(10, Math.floor(w / 2)));
    const [tl, g, tr] = await Promise.allSettled([
      /** @type {Promise<import('../types.js').Timeline>} */ (api.post(`/timelineGraph/${path}`)),
      /** @type {Promise<import('../types.js').HistGraph>} */ (api.post(`/histGraph/${path}?points=${points}`)),
      /** @type {Promise<import('../types.js').Trend>} */ (api.get(`/getTrend/${type}/${enc}`)),
    ]);
    if (!alive || seq !== graphSeq) return;
    state.tl = tl.status === 'fulfilled' ? tl.value : null;
    state.g = g.status === 'fulfilled' ? g.value : null;
    state.range = [start, end];
    drawAll();
    if (tr.status === 'fulfilled') renderTrend(tr.value);
  }
  /**
   * @type {{ tl: import('../types.js').Timeline | null, g: import('../charts.js').HistGraph | null, range: number[],
   *   hit: ReturnType<typeof drawResponseChart> | null }}
   */
  const state = { tl: null, g: null, range: [0, 0], hit: null };
  function drawAll() {
    const [start, end] = state.range;
    drawTimeline(timelineCanvas, state.tl, start, end, timelineCanvas.clientWidth || 600);
    setChildren(
      shares,
      ...Object.entries(state.tl?.sharePct || {}).map(([s, p]) => h('span.share', statusPill(s), ` ${fmtPct(p)}`)),
    );
    if (!state.tl?.segments?.length) shares.append(h('span.muted', 'No data in this range.'));
    const g = state.g || {
      t: [],
      count: [],
      responseMs: { min: [], avg: [], max: [] },
      startTime: start,
      endTime: end,
    };
    state.hit = drawResponseChart(chartCanvas, g, chartBox.clientWidth || 600, chartCanvas.clientHeight || 240);
    chartCanvas.dataset.points = String(g.t.length);
    chartCanvas.dataset.drawn = 'true';
    chartNote.textContent = g.t.length
      ? `${g.t.length} points${g.bucketMs ? `, ${fmtMs(g.bucketMs)} each` : ''} (min–max band, average line; red marks: runs without a response)`
      : 'No response times in this range.';
  }
  chartCanvas.addEventListener('mousemove', (e) => {
    const g = state.g;
    if (!g || !state.hit) return;
    const rect = chartCanvas.getBoundingClientRect();
    const i = state.hit.indexAt(e.clientX - rect.left);
    if (i < 0) return (tip.hidden = true);
    tip.hidden = false;
    tip.textContent = `${fmtTime(g.t[i])} · avg ${fmtMs(g.responseMs.avg[i])} · min ${fmtMs(g.responseMs.min[i])} · max ${fmtMs(g.responseMs.max[i])} · ${g.count[i]} runs`;
    tip.style.left = `${Math.min(state.hit.xOf(i), rect.width - 260)}px`;
  });
  chartCanvas.addEventListener('mouseleave', () => (tip.hidden = true));

  /** @param {import('../types.js').Trend} t */
  function renderTrend(t) {
    setChildren(
      trendBox,
      .../** @type {const} */ (['24h', '7d', '4w']).map((k) => {
        const p = t[k];
        if (!p) return null;
        const ch = p.change || {};
        /** @type {(v: number | null | undefined, unit: string, goodUp: boolean) => HTMLSpanElement | null} */
        const delta = (v, unit, goodUp) =>
          v === null || v === undefined
            ? null
            : h(
                `span.delta.${v > 0 === goodUp ? 'good' : v === 0 ? 'same' : 'bad'}`,
                `${v > 0 ? '▲' : v < 0 ? '▼' : '='} ${Math.abs(v).toFixed(unit === '%' ? 2 : 0)}${unit}`,
              );
        return h(
          'div.trend',
          h('h3', k),
          h('div.big', fmtPct(p.availabilityPct)),
          h('div.muted.small', 'availability ', delta(ch.availabilityPct, '%', true)),
          h('div', `avg ${fmtMs(p.avgResponseMs)} `, delta(ch.avgResponseMs, ' ms', false)),
          h('div', `p95 ${fmtMs(p.p95ResponseMs)} `, delta(ch.p95ResponseMs, ' ms', false)),
          h('div.muted.small', `${p.total} runs`),
        );
      }),
    );
  }

  let lastTs = byName.get(name)?.last?.ts;
  const onChange = debounce(() => {
    const m = byName.get(name);
    renderHeader();
    if (m?.last?.ts !== lastTs) {
      lastTs = m?.last?.ts;
      void loadDetails();
      void loadGraphs();
    }
  }, 300);
  const unsub = monitorsVersion.sub((v) => {
    if (!v.changed || v.changed.has(name)) onChange();
  });
  const ro = new ResizeObserver(debounce(() => state.range[1] && drawAll(), 100));
  ro.observe(chartBox);
  void loadDetails();
  void loadGraphs();
  return () => {
    alive = false;
    unsub();
    ro.disconnect();
  };
}
