/** Bytes of one slot: a row rendered longer than this is never kept. */
export const ROW_SLOT_BYTES = 512;

/**
 * Rendered rows kept for reuse, one per serving thread, shared by every dataset and
 * generation that thread renders. A walk-forward loop asks for [D-90, D] as of D, then for
 * [D-89, D+1] as of D+1: the two answers share almost every row (the same physical
 * versions), so the second one mostly copies bytes instead of formatting them again.
 *
 * Storage is sized once: fixed slots of ROW_SLOT_BYTES, direct-mapped by (renderer, row),
 * each tagged with its renderer's id and row id. A renderer belongs to one generation of
 * one dataset, so a tag can never match a row of another table or generation; a newer row
 * simply overwrites the slot. Nothing needs clearing.
 */
export class RowCache {
  /** slots - 1 (slots is a power of two) */
  readonly mask: number;
  /** per slot: id of the renderer whose row it holds, -1 when empty */
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
}
