/** Text formats whose rows a RowCache keeps: part of every tag, so JSON and CSV text of one row never meet. */
export const ROW_FORMAT_JSON = 1;
export const ROW_FORMAT_CSV = 2;
/** Set in `kind` when the layout is every column of the table (then layoutLo = layoutHi = 0). */
export const ROW_LAYOUT_ALL = 0x100;

/**
 * Who wrote a row's text, as the tag every serving thread agrees on: the generation's uid
 * (assigned once by the loading thread, unique in the process: a dataset, a generation),
 * the stored columns written (a bit per schema index, exact for tables up to 64 columns;
 * wider tables are only cached whole) and the format. Two threads rendering the same
 * (generation, layout, format) build equal owners, so one thread's text is another's hit;
 * owners that differ in any field can never match each other's slots.
 */
export class RowOwner {
  /** spreads owners over the slots, so two layouts' row 0 do not collide: a row's first slot is row + spread */
  readonly spread: number;
  /** an independent second spread: a row's other candidate slot, for when the first is taken by a busy row */
  readonly spread2: number;

  constructor(
    readonly gen: number,
    readonly layoutLo: number,
    readonly layoutHi: number,
    readonly kind: number,
  ) {
    let h = Math.imul(gen ^ 0x2545f491, 0x9e3779b1);
    h = Math.imul(h ^ layoutLo, 0x85ebca6b);
    h = Math.imul(h ^ layoutHi, 0xc2b2ae35);
    h = Math.imul(h ^ kind, 0x27d4eb2f);
    this.spread = (h ^ (h >>> 15)) | 0;
    const h2 = Math.imul(h ^ (h >>> 13), 0x5bd1e995);
    this.spread2 = (h2 ^ (h2 >>> 16)) | 0;
  }
}
