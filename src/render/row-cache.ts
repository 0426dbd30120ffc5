/** Bytes of one slot: a row rendered longer than this is never kept. */
export const ROW_SLOT_BYTES = 512;

/** Owner ids of this thread: a RowCache tells row writers (tables, generations, layouts, formats) apart by them. */
let nextOwner = 0;

/**
 * A fresh owner id for a RowCache, unique on this thread. Every row writer whose text
 * differs (another generation, another column projection, another format) takes its own,
 * so a tag can never match text another writer wrote for the same row id.
 */
export function newRowCacheOwner(): number {
  return nextOwner++;
}

/** What a RowCache has done since it was made (tests assert hits, operators read the rates). */
export interface RowCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** rows stored into a slot that held another row */
  readonly evictions: number;
  readonly slots: number;
}

/**
 * Rendered rows kept for reuse, one per serving thread, shared by every dataset,
 * generation and text format that thread writes. A walk-forward loop asks for [D-90, D] as
 * of D, then for [D-89, D+1] as of D+1: the two answers share almost every row (the same
 * physical versions), so the second one mostly copies bytes instead of formatting them again.
 *
 * Storage is sized once: fixed slots of ROW_SLOT_BYTES, direct-mapped by (owner, row),
 * each tagged with its owner id and row id. An owner is one row writer of one generation
 * of one dataset, so a tag can never match a row of another table, generation or format; a
 * newer row simply overwrites the slot. Nothing needs clearing.
 *
 * The protocol is `find` then, on a miss, write the row and `keep` it; a writer never
 * touches the arrays below (they are public for tests that prove a hit came from here).
 */
export class RowCache {
  /** slots - 1 (slots is a power of two) */
  readonly mask: number;
  /** per slot: owner id of the row it holds, -1 when empty */
  readonly owner: Int32Array;
  /** per slot: the physical row id */
  readonly row: Int32Array;
  /**
   * per slot: a view of its row's bytes in `bytes`, made when the row is stored, so a hit
   * copies without allocating a view (one small object per filled slot, not per hit)
   */
  readonly text: Array<Uint8Array | undefined>;
  /** slot i's bytes start at i·ROW_SLOT_BYTES */
  readonly bytes: Uint8Array;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  /** Uses at most maxBytes for row text (at least one slot). */
  constructor(maxBytes: number) {
    let slots = 1;
    while (slots * 2 * ROW_SLOT_BYTES <= maxBytes) slots *= 2;
    this.mask = slots - 1;
    this.owner = new Int32Array(slots).fill(-1);
    this.row = new Int32Array(slots);
    this.text = new Array<Uint8Array | undefined>(slots).fill(undefined);
    this.bytes = new Uint8Array(slots * ROW_SLOT_BYTES);
  }

  get slots(): number {
    return this.mask + 1;
  }

  /** The slot of (owner, row): owners are spread over the slots so two tables' row 0 do not collide. */
  private slotOf(owner: number, row: number): number {
    return (row + Math.imul(owner + 1, 0x9e3779b1)) & this.mask;
  }

  /** The text `owner` wrote for `row`, or undefined when the cache does not hold it. */
  find(owner: number, row: number): Uint8Array | undefined {
    const slot = this.slotOf(owner, row);
    if (this.row[slot] === row && this.owner[slot] === owner) {
      this.hits++;
      return this.text[slot];
    }
    this.misses++;
    return undefined;
  }

  /** Keeps src[start..end) as the text `owner` wrote for `row`; a row longer than a slot is not kept. */
  keep(owner: number, row: number, src: Uint8Array, start: number, end: number): void {
    if (end - start > ROW_SLOT_BYTES) return;
    const slot = this.slotOf(owner, row);
    if (this.owner[slot] !== -1) this.evictions++;
    const at = slot * ROW_SLOT_BYTES;
    const t = this.bytes.subarray(at, at + end - start);
    t.set(src.subarray(start, end));
    this.text[slot] = t;
    this.row[slot] = row;
    this.owner[slot] = owner;
  }

  stats(): RowCacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, slots: this.slots };
  }
}
