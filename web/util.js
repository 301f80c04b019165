// Small DOM and formatting helpers shared by every view (no framework).
// @ts-check

/** @typedef {Node | string | number | boolean | null | undefined | unknown[]} Child  (arrays nest) */
/** @typedef {Record<string, unknown>} Attrs */
/**
 * The tag of a selector: 'input.a#b' → 'input'.
 * @template {string} S
 * @typedef {S extends `${infer T}.${string}` ? TagOf<T> : S extends `${infer T}#${string}` ? T : S} TagOf
 */
/**
 * The element h(sel) builds: h('input') is an HTMLInputElement, h('.x') an HTMLDivElement.
 * @template {string} S
 * @typedef {TagOf<S> extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[TagOf<S>]
 *   : TagOf<S> extends '' ? HTMLDivElement : HTMLElement} ElementOf
 */

/**
 * h('div.cls#id', {attr}, ...children): builds an element. Attributes starting with "on" are listeners.
 * @template {string} S
 * @param {S} sel
 * @param {Attrs | Child} [attrs]
 * @param {...Child} children
 * @returns {ElementOf<S>}
 */
export function h(sel, attrs, ...children) {
  const m = /^([a-z0-9-]+)?((?:[.#][\w-]+)*)$/i.exec(sel);
  const el = document.createElement(m?.[1] || 'div');
  for (const part of (m?.[2] || '').match(/[.#][\w-]+/g) || []) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = undefined;
  }
  for (const [k, v] of Object.entries(/** @type {Attrs} */ (attrs || {}))) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k === 'class') el.className = /** @type {string} */ (v);
    else if (k in el && typeof v !== 'string')
      /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (el))[k] = v;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- numbers too (maxlength): as setAttribute does
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return /** @type {ElementOf<S>} */ (el);
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, /** @type {Child[]} */ (c));
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** @typedef {import('./types.js').ShownStatus} ShownStatus */

export const STATUS_RANK = {
  DOWN: 0,
  CRITICAL: 1,
  ERROR: 2,
  EXCEPTION: 3,
  MAJOR: 4,
  MINOR: 5,
  DOWNTIME: 6,
  PENDING: 7,
  OK: 8,
  OFF: 9,
};
export const STATUS_LIST = ['DOWN', 'CRITICAL', 'ERROR', 'EXCEPTION', 'MAJOR', 'MINOR', 'DOWNTIME', 'OK'];
/** Chart colours (CSS uses the same through classes). */
export const STATUS_COLOR = {
  OK: '#1f9d55',
  MINOR: '#c9a100',
  MAJOR: '#e07b00',
  CRITICAL: '#d6336c',
  DOWN: '#d92d20',
  ERROR: '#c0262d',
  EXCEPTION: '#8e44ad',
  DOWNTIME: '#3b82f6',
  PENDING: '#8a94a6',
  OFF: '#8a94a6',
};
/** @type {Record<string, string>}  statusPill also shows statuses it has no icon for (a problem's, a certificate's) */
const STATUS_ICON = {
  OK: '✓',
  MINOR: '!',
  MAJOR: '!!',
  CRITICAL: '✕',
  DOWN: '↓',
  ERROR: '✕',
  EXCEPTION: '⚠',
  DOWNTIME: '⏸',
  PENDING: '…',
  OFF: '○',
};

/**
 * The status a monitor summary shows: OFF when disabled, PENDING before its first result.
 * @param {{ state?: unknown, last?: { status: import('./types.js').Status } | null }} m
 * @returns {ShownStatus}
 */
export function effectiveStatus(m) {
  if (m.state === 'off') return 'OFF';
  return m.last?.status || 'PENDING';
}

/**
 * @param {string} status  a ShownStatus, or another status word the server sends (a problem's, a certificate level)
 * @param {string} [label]  the text (default: the status)
 */
export function statusPill(status, label) {
  const text = label ?? (status === 'OFF' ? 'Disabled' : status === 'PENDING' ? 'Pending' : status);
  return h(
    `span.pill.s-${status}`,
    { title: `Status: ${text}` },
    h('span.pill-icon', { 'aria-hidden': 'true' }, STATUS_ICON[status] || '?'),
    text,
  );
}

/** @param {string | undefined} tags  "[a,b]" */
export function parseTags(tags) {
  if (!tags) return [];
  return String(tags)
    .trim()
    .replace(/^\[/, '')
    .replace(/\]$/, '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** @param {number | null | undefined} ms */
export function fmtMs(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

/** @param {number | null | undefined} ts  Unix ms */
export function fmtTime(ts, withSeconds = true) {
  if (!ts) return '–';
  const d = new Date(ts);
  const p = (/** @type {number} */ n) => String(n).padStart(2, '0');
  const t = `${p(d.getHours())}:${p(d.getMinutes())}${withSeconds ? `:${p(d.getSeconds())}` : ''}`;
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${t}`;
}

/** @param {number | null | undefined} ts  Unix ms */
export function fmtAgo(ts, now = Date.now()) {
  if (!ts) return 'never';
  const s = Math.round((now - ts) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** @param {number | null | undefined} v */
export function fmtPct(v, digits = 2) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(digits)}%`;
}

/**
 * Path of the monitor page.
 * @param {{ type: string, sched: string, name: string }} m
 */
export function monitorHref(m) {
  return `#/m/${encodeURIComponent(m.type)}/${encodeURIComponent(m.sched)}/${encodeURIComponent(m.name)}`;
}

/**
 * Canvas sized to its CSS box at the device pixel ratio; returns the 2D context scaled to CSS pixels.
 * @param {HTMLCanvasElement} canvas
 * @param {number} cssW
 * @param {number} cssH
 */
export function fitCanvas(canvas, cssW, cssH) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(cssW * dpr));
  const hh = Math.max(1, Math.round(cssH * dpr));
  if (canvas.width !== w || canvas.height !== hh) {
    canvas.width = w;
    canvas.height = hh;
  }
  // A canvas that has no other context always has a 2d one.
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssW, cssH);
  return ctx;
}

/**
 * @param {string} message
 * @param {'info' | 'error'} [kind]
 */
export function toast(message, kind = 'info') {
  let box = document.getElementById('toasts');
  if (!box) document.body.append((box = h('div#toasts', { role: 'status', 'aria-live': 'polite' })));
  const t = h(`div.toast.t-${kind}`, message);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

/**
 * A modal confirmation using <dialog>; resolves true when confirmed.
 * @param {string} title
 * @param {string} text
 * @returns {Promise<boolean>}
 */
export function confirmDialog(title, text, okLabel = 'Confirm', danger = true) {
  return new Promise((resolve) => {
    const ok = h(`button.btn${danger ? '.danger' : '.primary'}`, { type: 'submit', value: 'ok' }, okLabel);
    const dlg = h(
      'dialog.dialog',
      { 'aria-labelledby': 'dlg-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2#dlg-title', title),
        h('p', text),
        h('div.row-end', h('button.btn', { type: 'submit', value: 'cancel' }, 'Cancel'), ok),
      ),
    );
    dlg.addEventListener('close', () => {
      resolve(dlg.returnValue === 'ok');
      dlg.remove();
    });
    document.body.append(dlg);
    dlg.showModal();
    ok.focus();
  });
}

/**
 * fn, called once calls have stopped for ms (with the last call's arguments).
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn
 * @param {number} ms
 * @returns {(...args: A) => void}
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let t;
  return (...a) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

/**
 * Replaces el's children; skips null/undefined/false and flattens arrays (unlike replaceChildren, which prints "null").
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 */
export function setChildren(el, ...children) {
  el.textContent = '';
  append(el, children);
  return el;
}
