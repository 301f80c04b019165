// Overview: every monitor, worst first, filterable, live (poll worker), virtualised for 10,000+ rows.
// @ts-check
import {
  h,
  setChildren,
  effectiveStatus,
  STATUS_RANK,
  STATUS_LIST,
  parseTags,
  fmtMs,
  fmtAgo,
  monitorHref,
  debounce,
} from '../util.js';
import { byName, monitorsVersion } from '../monitors-store.js';
import { createVirtualList } from '../virtual-list.js';
import { drawSparkline } from '../charts.js';
import { originText } from './result.js';
import { api, can, monitorTypes } from '../api.js';

const SPARK_RANGE_MS = 6 * 3_600_000;
const SPARK_TTL_MS = 120_000;

function rowHeight() {
  return window.matchMedia('(max-width: 700px)').matches ? 84 : 52;
}

/** @typedef {import('../monitors-store.js').MonitorSummary} MonitorSummary */
/**
 * A row of the list: the monitor and what the filters, sort and grouping need.
 * @typedef {{ key: string, m: MonitorSummary, name: string, status: string, rank: number, tags: string[], hay: string,
 *   depth?: number, dependants?: number }} Item
 */
/**
 * @typedef {HTMLAnchorElement & { _refs: { pill: HTMLElement, title: HTMLElement, sub: HTMLElement, type: Element,
 *   rt: HTMLElement, spark: HTMLCanvasElement, meta: HTMLElement, tags: HTMLElement } }} RowEl
 */

/**
 * @param {MonitorSummary} m
 * @param {Map<string, Item>} cache
 * @returns {Item}
 */
function derive(m, cache) {
  const key = `${m.updatedMs}|${m.state}|${m.last?.ts}|${m.last?.status}`;
  const c = cache.get(m.name);
  if (c && c.key === key && c.m === m) return c;
  const status = effectiveStatus(m);
  const tags = parseTags(m.tags);
  const hay =
    `${m.name} ${m.display_name || ''} ${m.type} ${m.url || m.api || m.ip || m.domain || m.dbIp || ''} ${m.probe || ''} ${m.location || ''} ${tags.join(' ')}`.toLowerCase();
  const d = { key, m, name: m.name, status, rank: STATUS_RANK[status] ?? 7, tags, hay };
  cache.set(m.name, d);
  return d;
}

function createRow() {
  const pill = h('span.pill');
  const title = h('span.m-title');
  const sub = h('span.m-sub');
  const rt = h('span.m-rt');
  const spark = h('canvas.spark', { width: 96, height: 24, 'aria-hidden': 'true' });
  const meta = h('span.m-meta');
  const tags = h('span.m-tags');
  const el = /** @type {RowEl} */ (
    h('a.mrow', h('span.m-status', pill), h('span.m-name', title, sub), h('span.m-type'), rt, spark, meta, tags)
  );
  el._refs = { pill, title, sub, type: /** @type {Element} */ (el.children[2]), rt, spark, meta, tags };
  return el;
}

/**
 * Children whose last result had its alerts suppressed for a failing parent (`last.suppressedBy`) follow that parent,
 * indented one level per generation (issue 18 §3: router → switch → services reads as one problem). A parent hidden
 * by the filters leaves its children in place; a stale loop of suppressions is shown flat rather than lost. Sets
 * `depth` and `dependants` on each item and adds to `moved` (when given) the names whose place in a group changed;
 * returns the new order. With no suppressed result (the usual case) the order is kept and nothing is allocated.
 */
/**
 * @param {Item[]} sorted
 * @param {Set<string>} [moved]
 */
function groupUnderParents(sorted, moved) {
  /** @type {(d: Item, depth: number, dependants: number) => void} */
  const place = (d, depth, dependants) => {
    if (moved && (d.depth !== depth || d.dependants !== dependants)) moved.add(d.name);
    d.depth = depth;
    d.dependants = dependants;
  };
  if (!sorted.some((d) => d.m.last?.suppressedBy)) {
    for (const d of sorted) place(d, 0, 0);
    return sorted;
  }
  const shown = new Set(sorted.map((d) => d.name));
  /** @type {Map<string, Item[]>}  parent → its suppressed children */
  const kids = new Map();
  /** @type {Item[]} */
  const roots = [];
  for (const d of sorted) {
    const p = d.m.last?.suppressedBy;
    if (p && p !== d.name && shown.has(p)) {
      if (!kids.has(p)) kids.set(p, []);
      /** @type {Item[]} */ (kids.get(p)).push(d);
    } else roots.push(d);
  }
  /** @type {Item[]} */
  const out = [];
  /** @type {Set<string>} */
  const seen = new Set();
  /** @type {(d: Item, depth: number) => void} */
  const visit = (d, depth) => {
    if (seen.has(d.name)) return;
    seen.add(d.name);
    place(d, depth, kids.get(d.name)?.length ?? 0);
    out.push(d);
    for (const c of kids.get(d.name) ?? []) visit(c, depth + 1);
  };
  for (const d of roots) visit(d, 0);
  for (const d of sorted) visit(d, 0);
  return out;
}

/**
 * A sparkline's state: loading while a fetch is out (with the graph before it, if any), else its graph (none when
 * the fetch failed) and when it was fetched.
 * @typedef {{ loading: true, g?: import('../types.js').HistGraph, fetchedMs?: number }
 *   | { loading?: undefined, g: import('../types.js').HistGraph | undefined, fetchedMs: number }} Spark
 */
/** @typedef {{ text: string, status: string, type: string, tag: string }} Filters */

/** @param {HTMLElement} root */
export function mountOverview(root) {
  /** @type {Map<string, Item>} */
  const cache = new Map();
  /** @type {Map<string, Spark>} */
  const sparks = new Map();
  /** @type {Filters} */
  const filters = { text: '', status: 'all', type: 'all', tag: 'all' };
  const counts = h('div.counts', { 'aria-live': 'polite' });
  const tagSel = h('select#f-tag', { 'aria-label': 'Filter by tag' }, h('option', { value: 'all' }, 'All tags'));
  const typeSel = h('select#f-type', { 'aria-label': 'Filter by type' }, h('option', { value: 'all' }, 'All types'));
  // The type list is the service's (its OpenAPI's /<type>/create paths), not a copy kept here.
  void monitorTypes()
    .then((ts) => typeSel.append(...ts.map((t) => h('option', { value: t }, t))))
    .catch(() => undefined);
  const statusSel = h(
    'select#f-status',
    { 'aria-label': 'Filter by status' },
    h('option', { value: 'all' }, 'All statuses'),
    h('option', { value: 'problems' }, 'Problems (not OK)'),
    STATUS_LIST.map((s) => h('option', { value: s }, s)),
    h('option', { value: 'PENDING' }, 'Pending'),
    h('option', { value: 'OFF' }, 'Disabled'),
  );
  const search = h('input#f-text', {
    type: 'search',
    placeholder: 'Search name, target, tag, probe…',
    'aria-label': 'Search monitors',
  });
  const listBox = h('div.list-box');
  const empty = h('p.empty', { hidden: true });
  const header = h(
    'div.mrow.mhead',
    { 'aria-hidden': 'true' },
    h('span', 'Status'),
    h('span', 'Monitor'),
    h('span', 'Type'),
    h('span', 'Response'),
    h('span', 'Recent'),
    h('span', 'Probe · location'),
    h('span', 'Tags'),
  );
  root.append(
    h(
      'section.overview',
      h(
        'div.toolbar',
        h('h1', 'Monitors'),
        counts,
        can.write() ? h('a.btn.primary', { href: '#/new/url' }, '+ New monitor') : null,
      ),
      h('div.filters', search, statusSel, typeSel, tagSel),
      header,
      listBox,
      empty,
    ),
  );

  const vl = createVirtualList({
    container: listBox,
    rowHeight,
    createRow,
    label: 'Monitors',
    /**
     * @param {RowEl} el
     * @param {Item} d
     */
    renderRow(el, d) {
      const r = el._refs;
      const m = d.m;
      el.href = monitorHref(m);
      el.dataset.name = m.name;
      el.dataset.status = d.status;
      el.dataset.depth = String(d.depth);
      el.style.setProperty('--depth', String(d.depth));
      el.classList.toggle('child', (d.depth ?? 0) > 0);
      r.pill.className = `pill s-${d.status}`;
      r.pill.textContent = d.status === 'OFF' ? 'Disabled' : d.status === 'PENDING' ? 'Pending' : d.status;
      r.title.textContent = m.display_name || m.name;
      r.sub.textContent = m.last?.suppressedBy
        ? `↳ ${m.last.suppressedBy} is failing: alerts suppressed`
        : d.dependants
          ? `${d.dependants} dependant${d.dependants === 1 ? '' : 's'} failing below`
          : m.display_name && m.display_name !== m.name
            ? m.name
            : m.last
              ? fmtAgo(m.last.ts)
              : 'no result yet';
      r.sub.title = m.last?.message || '';
      r.type.textContent = m.type;
      r.rt.textContent = m.last ? fmtMs(m.last.responseTimeMs) : '–';
      r.meta.textContent = [m.probe, m.location].filter(Boolean).join(' · ');
      r.meta.title = originText(m.last) ? `last result ran on ${originText(m.last)}` : '';
      r.tags.textContent = d.tags.join(', ');
      el.setAttribute(
        'aria-label',
        `${m.display_name || m.name}, ${r.pill.textContent}, ${m.type}, ${r.rt.textContent}`,
      );
      drawSparkline(r.spark, sparks.get(m.name)?.g);
    },
  });

  let knownTags = '';
  /** @param {Set<string> | null} changed  the names that changed, null: everything may have */
  function refresh(changed) {
    /** @type {Item[]} */
    const all = [];
    /** @type {Set<string>} */
    const tagSet = new Set();
    /** @type {Record<string, number>}  status → monitors */
    const c = {};
    for (const m of byName.values()) {
      const d = derive(m, cache);
      all.push(d);
      c[d.status] = (c[d.status] || 0) + 1;
      for (const t of d.tags) tagSet.add(t);
    }
    if (changed) for (const n of changed) if (!byName.has(n)) cache.delete(n);
    const q = filters.text.trim().toLowerCase();
    const out = all.filter(
      (d) =>
        (filters.status === 'all' ||
          (filters.status === 'problems'
            ? !['OK', 'OFF', 'PENDING', 'DOWNTIME'].includes(d.status)
            : d.status === filters.status)) &&
        (filters.type === 'all' || d.m.type === filters.type) &&
        (filters.tag === 'all' || d.tags.includes(filters.tag)) &&
        (!q || d.hay.includes(q)),
    );
    out.sort((a, b) => a.rank - b.rank || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // A row whose place in a group changed is re-rendered even when its own monitor did not change.
    const dirty = changed ? new Set(changed) : undefined;
    vl.setItems(groupUnderParents(out, dirty), { dirtyNames: dirty });
    const st = monitorsVersion.get();
    setChildren(
      counts,
      h('span.count', `${all.length} monitor${all.length === 1 ? '' : 's'}`),
      ...[...STATUS_LIST, 'PENDING', 'OFF']
        .filter((s) => c[s])
        .map((s) =>
          h(
            `button.chip.s-${s}`,
            { type: 'button', title: `Show ${s}`, onclick: () => setFilter('status', s) },
            `${c[s]} ${s === 'OFF' ? 'disabled' : s.toLowerCase()}`,
          ),
        ),
      filters.status !== 'all' || filters.type !== 'all' || filters.tag !== 'all' || q
        ? h('span.count', `· ${out.length} shown`)
        : null,
    );
    empty.hidden = out.length > 0 || !st.loaded;
    empty.textContent = all.length ? 'No monitor matches the filters.' : 'No monitors yet.';
    const tagsKey = [...tagSet].sort().join('\n');
    if (tagsKey !== knownTags) {
      knownTags = tagsKey;
      setChildren(
        tagSel,
        h('option', { value: 'all' }, 'All tags'),
        ...[...tagSet].sort().map((t) => h('option', { value: t }, t)),
      );
      tagSel.value = tagSet.has(filters.tag) ? filters.tag : 'all';
    }
    loadSparks();
  }

  /**
   * @param {keyof Filters} k
   * @param {string} v
   */
  function setFilter(k, v) {
    filters[k] = v;
    ({ text: search, status: statusSel, type: typeSel, tag: tagSel })[k].value = v;
    refresh(null);
  }
  search.addEventListener(
    'input',
    debounce(() => setFilter('text', search.value), 120),
  );
  statusSel.addEventListener('change', () => setFilter('status', statusSel.value));
  typeSel.addEventListener('change', () => setFilter('type', typeSel.value));
  tagSel.addEventListener('change', () => setFilter('tag', tagSel.value));

  // Sparklines: fetched only for rows left visible once scrolling settles, a few at a time, cached for two minutes.
  let inflight = 0;
  let alive = true;
  const loadSparks = debounce(() => {
    if (!alive) return;
    const now = Date.now();
    const want = vl.visible().filter((d) => {
      const s = sparks.get(d.name);
      return !s || (!s.loading && (now - s.fetchedMs > SPARK_TTL_MS || (d.m.last?.ts ?? 0) > s.fetchedMs));
    });
    const next = () => {
      while (alive && inflight < 4 && want.length) {
        const d = /** @type {Item} */ (want.shift());
        const prev = sparks.get(d.name);
        sparks.set(d.name, { ...prev, loading: true });
        inflight++;
        const end = Date.now();
        /** @type {Promise<import('../types.js').HistGraph>} */ (
          api.post(`/histGraph/${d.m.type}/${encodeURIComponent(d.name)}/${end - SPARK_RANGE_MS}/${end}?points=24`)
        )
          .then((g) => sparks.set(d.name, { g, fetchedMs: Date.now() }))
          .catch(() => sparks.set(d.name, { g: prev?.g, fetchedMs: Date.now() }))
          .finally(() => {
            inflight--;
            vl.rerenderVisible((x) => x.name === d.name);
            next();
          });
      }
    };
    next();
  }, 250);
  listBox.addEventListener('scroll', loadSparks, { passive: true });

  let ready = false;
  const unsub = monitorsVersion.sub((v) => {
    refresh(v.changed);
    if (!ready && v.loaded) {
      ready = true;
      performance.mark('sentinel:overview-data');
    }
  });
  const ticker = setInterval(() => vl.rerenderVisible(), 15_000);
  refresh(null);
  search.focus();
  return () => {
    alive = false;
    unsub();
    clearInterval(ticker);
    vl.destroy();
  };
}
