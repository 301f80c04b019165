/**
 * An indexed binary min-heap of due times: O(log n) push, pop, update and remove-by-entry, O(1) peek. Each entry
 * carries its own position (`heapIndex`, -1 when not in the heap) so a monitor can be rescheduled or removed without
 * a search. Ties on dueMs break on `seq` (insertion order) so equal due times pop in a stable, fair order.
 */
export interface HeapEntry {
  dueMs: number;
  seq: number;
  heapIndex: number;
}

export class DueHeap<T extends HeapEntry> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  has(entry: T): boolean {
    return entry.heapIndex >= 0 && this.items[entry.heapIndex] === entry;
  }

  push(entry: T): void {
    entry.heapIndex = this.items.length;
    this.items.push(entry);
    this.up(entry.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top === undefined) return undefined;
    this.removeAt(0);
    return top;
  }

  remove(entry: T): boolean {
    if (!this.has(entry)) return false;
    this.removeAt(entry.heapIndex);
    return true;
  }

  /** Re-positions an entry after its dueMs changed (or inserts it when absent). */
  update(entry: T): void {
    if (!this.has(entry)) {
      this.push(entry);
      return;
    }
    this.up(entry.heapIndex);
    this.down(entry.heapIndex);
  }

  private removeAt(i: number): void {
    const items = this.items;
    const removed = items[i]!;
    const last = items.pop() as T;
    removed.heapIndex = -1;
    if (i < items.length) {
      items[i] = last;
      last.heapIndex = i;
      this.up(i);
      this.down(last.heapIndex);
    }
  }

  private less(a: T, b: T): boolean {
    return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.seq < b.seq);
  }

  private up(i: number): void {
    const items = this.items;
    const entry = items[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent]!;
      if (!this.less(entry, p)) break;
      items[i] = p;
      p.heapIndex = i;
      i = parent;
    }
    items[i] = entry;
    entry.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const entry = items[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.less(items[r]!, items[l]!) ? r : l;
      const c = items[child]!;
      if (!this.less(c, entry)) break;
      items[i] = c;
      c.heapIndex = i;
      i = child;
    }
    items[i] = entry;
    entry.heapIndex = i;
  }
}
