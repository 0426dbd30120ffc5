import { LRUCache } from 'lru-cache';
import type { ProductSpec } from '../catalog/products.js';
import { dayEndUs, parseDate } from '../time/instant.js';
import type { Generation } from './generation.js';

export type SlotState = 'pending' | 'loaded' | 'missing' | 'refused' | 'unreachable';

/** Bytes of superseded generations kept for live cursor chains (contract 2). */
export const DEFAULT_RETAINED_BYTES = 1 << 30;

/**
 * One named dataset: its serving generation, and the superseded ones kept so that a cursor
 * chain started on them can finish. Swapping is one assignment: a request reads `current`
 * once and uses that generation to the end.
 */
export class DatasetSlot {
  readonly id: string;
  readonly floorUs: number;
  state: SlotState = 'pending';
  current: Generation | null = null;
  /** why the last load or check failed; null after a success */
  lastError: string | null = null;
  lastCheckMs: number | null = null;
  private readonly retained: LRUCache<number, Generation>;

  constructor(
    readonly product: ProductSpec,
    readonly dataset: string,
    retainedBytes = DEFAULT_RETAINED_BYTES,
  ) {
    this.id = `${product.id}/${dataset}`;
    this.floorUs = dayEndUs(parseDate(product.floor)!);
    this.retained = new LRUCache<number, Generation>({
      maxSize: Math.max(1, retainedBytes),
      sizeCalculation: (g) => Math.max(1, g.table.byteSize),
    });
  }

  /** Serves `next` from now on; the previous generation stays reachable for cursors while it fits. */
  swap(next: Generation): void {
    const prev = this.current;
    this.current = next;
    this.state = 'loaded';
    this.lastError = null;
    if (prev !== null && prev.number !== next.number) this.retained.set(prev.number, prev);
    this.retained.delete(next.number);
  }

  /** A generation by number: the current one or a retained one, else null (cursor_expired). */
  find(number: number): Generation | null {
    if (this.current?.number === number) return this.current;
    return this.retained.get(number) ?? null;
  }

  /** Numbers of the superseded generations still kept for cursors. */
  retainedNumbers(): number[] {
    return [...this.retained.keys()].sort((a, b) => a - b);
  }

  /** A load failed: keep serving what we have (a bad snapshot never replaces a good one). */
  fail(state: 'missing' | 'refused' | 'unreachable', reason: string): void {
    this.lastError = reason;
    if (this.current === null) this.state = state;
  }
}
