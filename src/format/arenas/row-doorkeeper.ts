/**
 * When a rendered row goes into the row arena: at once ('first'), or on its second render
 * since the doorkeeper was last cleared ('second').
 *
 * Keeping a row costs a copy of its text into shared memory plus a claim and a publish of
 * its slot: measured at about 40% of rendering the row itself (docs/decisions.md#row-arena).
 * A row asked for once is never copied back, so on traffic whose rows rarely recur
 * (random decision dates over a large table) keeping every fresh row costs more than the
 * arena saves, and it evicts rows that do recur. Walk-forward loops ask for a row again on
 * the next step, so 'second' delays their reuse by one render per row.
 */
export type RowAdmission = 'first' | 'second';

/** What a server uses unless told otherwise (measured in bench/RESULTS.md: the doorkeeper A/B). */
export const DEFAULT_ROW_ADMISSION: RowAdmission = 'second';

/** Int32 words of the doorkeeper's memory before its bits: [0] rows marked since the last clear. */
const HEADER_WORDS = 1;

/** Bits per row the arena can hold: few false "seen" (a false one only keeps a row a render early). */
const BITS_PER_ROW = 8;

/** Rows between clears at least: a small arena must not forget a loop's rows before its next step. */
const MIN_CAPACITY = 1 << 16;

/**
 * Shared memory for a doorkeeper cleared after about `marks` marks (a row arena: one per
 * slot), and not before minCapacity (rows: MIN_CAPACITY, so a small arena does not forget a
 * loop's rows before its next step).
 */
export function allocateDoorkeeper(marks: number, minCapacity = MIN_CAPACITY): SharedArrayBuffer {
  const capacity = Math.max(marks, minCapacity);
  let bits = 32;
  while (bits < capacity * BITS_PER_ROW) bits *= 2;
  return new SharedArrayBuffer((HEADER_WORDS + bits / 32) * 4);
}

/**
 * The 'second' admission: one bit per hashed (owner spread, row) in memory every serving
 * thread shares, so a row rendered once on one thread is kept when another renders it.
 * Cleared when as many rows were marked as the arena holds (a doorkeeper of the TinyLFU
 * kind): "recurs" means "recurs within about one arena's worth of fresh rows".
 *
 * Plain reads and writes, no atomics: a racing thread can lose a bit or a count, which only
 * makes a row wait one render more or a clear come later. The doorkeeper decides whether
 * text is kept, never which text a slot holds, so races cannot change an answer.
 */
export class RowDoorkeeper {
  private readonly words: Int32Array;
  /** bits - 1: bit positions are hash & mask */
  private readonly mask: number;
  private readonly capacity: number;

  constructor(memory: SharedArrayBuffer) {
    this.words = new Int32Array(memory);
    const bits = (this.words.length - HEADER_WORDS) * 32;
    this.mask = bits - 1;
    this.capacity = bits / BITS_PER_ROW;
  }

  /** Rows marked since the last clear. */
  get marked(): number {
    return this.words[0]!;
  }

  /** How many marks clear it. */
  get rowsPerClear(): number {
    return this.capacity;
  }

  /** Whether (spread, row) was marked since the last clear: keep it now. Otherwise marks it. */
  admit(spread: number, row: number): boolean {
    let h = Math.imul(row ^ spread, 0x9e3779b1);
    h ^= h >>> 16;
    const bit = h & this.mask;
    const w = HEADER_WORDS + (bit >>> 5);
    const m = 1 << (bit & 31);
    const words = this.words;
    const word = words[w]!;
    if ((word & m) !== 0) return true;
    words[w] = word | m;
    const marked = words[0]! + 1;
    if (marked >= this.capacity) words.fill(0);
    else words[0] = marked;
    return false;
  }
}
