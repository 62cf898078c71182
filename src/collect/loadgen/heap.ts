/**
 * A binary min-heap of items keyed by their `next` field (the intended time of their next
 * send), so the pacing loop finds what is due without scanning every connection.
 *
 * @module
 */

/** What the heap holds: `next` is the key, `inHeap` is kept up to date by the heap. */
export interface Timed {
  next: number;
  inHeap: boolean;
}

/** Min-heap on `next`. An item's key must not change while it is in the heap. */
export class TimeHeap<T extends Timed> {
  #items: T[] = [];

  /** Number of items. */
  get size(): number {
    return this.#items.length;
  }

  /** The item with the smallest `next`, or undefined. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds an item (no-op when it is already in). */
  push(item: T): void {
    if (item.inHeap) return;
    item.inHeap = true;
    const a = this.#items;
    let i = a.length;
    a.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].next <= item.next) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = item;
  }

  /** Removes and returns the item with the smallest `next`. */
  pop(): T | undefined {
    const a = this.#items;
    const top = a[0];
    if (top === undefined) return undefined;
    top.inHeap = false;
    const last = a.pop()!;
    if (a.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const c = r < a.length && a[r].next < a[l].next ? r : l;
      if (a[c].next >= last.next) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = last;
    return top;
  }

  /** Removes every item. */
  clear(): void {
    for (const x of this.#items) x.inHeap = false;
    this.#items.length = 0;
  }
}
