// A fixed-row-height virtualised list: only the visible rows (plus overscan) exist in the DOM, and their nodes are
// reused while scrolling (no create/destroy per frame). Rows are positioned with transform in one spacer.
// @ts-check
/**
 * @template T
 * @typedef {{ _idx: number, _item?: T, _dirty?: boolean }} RowState  what the list keeps on a pooled row element
 */

/**
 * @template {{ name: string }} T
 * @template {HTMLElement} E
 * @param {{ container: HTMLElement, rowHeight: () => number, renderRow: (el: E, item: T, idx: number) => void,
 *   createRow: () => E, overscan?: number, label?: string }} opts
 */
export function createVirtualList({ container, rowHeight, renderRow, createRow, overscan = 6, label }) {
  const spacer = document.createElement('div');
  spacer.className = 'vl-spacer';
  spacer.setAttribute('role', 'list');
  if (label) spacer.setAttribute('aria-label', label);
  container.append(spacer);
  container.classList.add('vl');
  /** @type {T[]} */
  let items = [];
  let rh = rowHeight();
  /** @type {Array<E & RowState<T>>} */
  const pool = [];
  let raf = 0;

  function render() {
    raf = 0;
    const top = container.scrollTop;
    const viewH = container.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / rh) - overscan);
    const last = Math.min(items.length, Math.ceil((top + viewH) / rh) + overscan);
    // Element for row idx is pool[idx % size]: scrolling by k rows re-renders only k elements.
    const size = Math.max(pool.length, Math.ceil(viewH / rh) + 2 * overscan + 1);
    while (pool.length < size) {
      const el = /** @type {E & RowState<T>} */ (createRow());
      el.setAttribute('role', 'listitem');
      el._idx = -1;
      spacer.append(el);
      pool.push(el);
    }
    /** @type {Set<E & RowState<T>>} */
    const used = new Set();
    for (let idx = first; idx < last; idx++) {
      const el = pool[idx % size];
      used.add(el);
      const item = items[idx];
      if (el._item !== item || el._idx !== idx || el._dirty) {
        if (el._idx !== idx) {
          el.style.transform = `translateY(${idx * rh}px)`;
          el.setAttribute('aria-posinset', String(idx + 1));
        }
        el.setAttribute('aria-setsize', String(items.length));
        el._item = item;
        el._idx = idx;
        el._dirty = false;
        renderRow(el, item, idx);
      }
      if (el.hidden) el.hidden = false;
    }
    for (const el of pool) {
      if (used.has(el) || el.hidden) continue;
      el.hidden = true;
      el._idx = -1;
      el._item = undefined;
    }
  }

  const schedule = () => {
    if (!raf) raf = requestAnimationFrame(render);
  };
  container.addEventListener('scroll', schedule, { passive: true });
  const ro = new ResizeObserver(() => {
    const next = rowHeight();
    if (next !== rh) {
      rh = next;
      spacer.style.height = `${items.length * rh}px`;
      for (const el of pool) el._dirty = true;
    }
    schedule();
  });
  ro.observe(container);

  return {
    /**
     * @param {T[]} next
     * @param {{ dirtyNames?: Set<string> }} [opts]  only these rows re-render (all when absent)
     */
    setItems(next, { dirtyNames } = {}) {
      items = next;
      spacer.style.height = `${items.length * rh}px`;
      for (const el of pool) if (!dirtyNames || (el._item && dirtyNames.has(el._item.name))) el._dirty = true;
      render();
    },
    /** Visible items (for lazy loads such as sparklines). */
    visible() {
      const top = container.scrollTop;
      const first = Math.max(0, Math.floor(top / rh));
      const last = Math.min(items.length, Math.ceil((top + (container.clientHeight || 600)) / rh));
      return items.slice(first, last);
    },
    /** @param {(item: T) => boolean} [pred] */
    rerenderVisible(pred) {
      for (const el of pool) if (!el.hidden && el._item && (!pred || pred(el._item))) renderRow(el, el._item, el._idx);
    },
    destroy() {
      cancelAnimationFrame(raf);
      ro.disconnect();
      container.removeEventListener('scroll', schedule);
      spacer.remove();
    },
  };
}
