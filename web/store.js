// A tiny reactive value: get, set, subscribe. Enough state management for this dashboard.

export function signal(value) {
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
