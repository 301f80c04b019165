// A tiny reactive value: get, set, subscribe. Enough state management for this dashboard.
// @ts-check

/**
 * @template T
 * @typedef {{ get(): T, set(next: T): void, sub(f: (value: T) => void): () => boolean }} Signal
 */

/**
 * @template T
 * @param {T} value
 * @returns {Signal<T>}
 */
export function signal(value) {
  /** @type {Set<(value: T) => void>} */
  const subs = new Set();
  return {
    get: () => value,
    set(next) {
      value = next;
      for (const f of [...subs]) f(value);
    },
    /** Calls f on every change; returns the unsubscribe function. */
    sub(f) {
      subs.add(f);
      return () => subs.delete(f);
    },
  };
}
