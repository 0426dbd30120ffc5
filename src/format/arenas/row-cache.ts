import type { Column } from '../../store/column.js';
import {
  allocateRowArena,
  ROW_SLOT_BYTES,
  TAG_GEN,
  TAG_HI,
  TAG_KIND,
  TAG_LEN,
  TAG_LO,
  TAG_REF,
  TAG_ROW,
  TAG_SEQ,
  TAG_WORDS,
  type RowArenaMemory,
} from './row-arena.js';
import { PageCache, type PageCacheStats } from './page-cache.js';
import { RowDoorkeeper, type RowAdmission } from './row-doorkeeper.js';
import type { RowOwner } from './row-owner.js';
import { RowOwners } from './row-owners.js';

export { ROW_SLOT_BYTES } from './row-arena.js';

/** What a RowCache has done since it was made, on its thread (tests assert hits, operators read the rates). */
export interface RowCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** rows stored into a slot that held another row */
  readonly evictions: number;
  /** fresh rows not kept: rendered for the first time since the doorkeeper was cleared */
  readonly declined: number;
  readonly slots: number;
  /** the page arena's, on this thread; null: no page arena */
  readonly pages: PageCacheStats | null;
}

/**
 * A page of more rows than this whose rows appear once in it (a data page: every series, a
 * history walked by cursor, latest of every series) is written straight, neither copied from
 * the row arena nor kept in it: its rows are mostly asked for once (a repeated bulk
 * question is answered whole from the response cache), so the arena would only add a copy
 * in and out per row (1.3-1.8 µs a row, bench/RESULTS.md "Bulk answers") and evict the rows
 * of the walk-forward loops it is for. A walk-forward page, whose rows come back once per
 * decision date within the answer, still goes through it. Walk-forward loops' windows are a
 * few hundred rows at most, well under this.
 */
export const BULK_PAGE_ROWS = 1024;

/** Float64Array words and DataView words agree on byte order only when told the platform's. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/**
 * x86 keeps loads in program order (TSO), so a hit's version re-read already comes after
 * its copy; weakly ordered CPUs (arm64) need a store-release between them. The store
 * costs about as much as copying a short row, so it is paid only where it is needed.
 */
const FENCE_BEFORE_RECHECK = process.arch !== 'x64' && process.arch !== 'ia32';

/**
 * One serving thread's view of the row arena: rendered rows kept for reuse, shared by
 * every serving thread and by every dataset, generation and text format they write. A
 * walk-forward loop asks for [D-90, D] as of D, then for [D-89, D+1] as of D+1: the two
 * answers share almost every row (the same physical versions), so the second one mostly
 * copies bytes instead of formatting them again, whichever thread wrote them first.
 *
 * Fixed slots of ROW_SLOT_BYTES on shared memory, each tagged with the full RowOwner
 * (generation uid, layout, format) and the row id, so a tag never matches text of another
 * table, generation, layout or format; a newer row simply overwrites a slot and nothing
 * needs clearing. A row may sit in two slots, row + spread and row + spread2 (2-way): a
 * walk-forward window is a run of consecutive rows, so with one candidate two loops whose
 * runs land on the same slots would evict each other on every step; with two, the second
 * one settles in its other slots. Which one a row takes: a free one or its own, else one
 * not copied since the last contest (the REF hint), else the second (contest ages both).
 *
 * Lock-free, one version word per slot (a seqlock). A writer claims a slot by moving its
 * even version to odd with compareExchange, writes text and tag, and publishes the next
 * even version; a writer that loses the claim just does not keep its row. A reader
 * checks the version is even and the tag is its own, copies, and re-reads the version:
 * any change means a writer was in the slot and the copy is a miss (the caller then
 * renders over the bytes it copied). Text is copied eight bytes at a time, as doubles,
 * without views, so a hit allocates nothing; text with eight bytes that read as a NaN is
 * never kept, since a NaN's bits need not survive a double's trip through V8.
 *
 * The protocol is `copy` then, on a miss, write the row and `keep` it; with a doorkeeper
 * (RowArenaMemory.seen) `keep` skips a row's first render. Counters are this thread's.
 */
export class RowCache {
  /** slots - 1 (slots is a power of two) */
  readonly mask: number;
  /** TAG_WORDS per slot (row-arena.ts); public for tests that inspect and tamper with slots */
  readonly tags: Int32Array;
  /** slot i's text starts at i·ROW_SLOT_BYTES */
  readonly bytes: Uint8Array;
  /**
   * The same memory as 8-byte words, for copying: a row goes through doubles, 8 bytes a
   * load, which out of shared memory beats every native copy (bench/micro/shared-copy.ts:
   * 133 ns for a 330-byte row against 247 for 4-byte words and 178-288 for copyWithin,
   * Buffer.copy and set, which V8 does with relaxed atomics on a SharedArrayBuffer).
   */
  private readonly words: Float64Array;
  /** this thread's own cell: a store to it orders a hit's copy before its version re-read (FENCE_BEFORE_RECHECK) */
  private readonly fence = new Int32Array(new SharedArrayBuffer(64));
  /** the generations this thread writes, to derive owners from column lists */
  readonly owners = new RowOwners();
  /** null: every rendered row is kept */
  private readonly doorkeeper: RowDoorkeeper | null;
  /** whole pages kept beside the rows (page-cache.ts); null: pages are written row by row */
  readonly pages: PageCache | null;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private declined = 0;

  constructor(readonly memory: RowArenaMemory) {
    this.tags = new Int32Array(memory.tags);
    this.bytes = new Uint8Array(memory.bytes);
    this.words = new Float64Array(memory.bytes);
    this.mask = this.bytes.length / ROW_SLOT_BYTES - 1;
    this.doorkeeper = memory.seen === null ? null : new RowDoorkeeper(memory.seen);
    this.pages = memory.pages === null ? null : new PageCache(memory.pages);
  }

  /**
   * A cache on fresh memory of its own, at most maxBytes of text (one thread: tests,
   * benches, a single serving thread); rows kept at once unless told otherwise.
   */
  static allocate(maxBytes: number, admission: RowAdmission = 'first', pageBytes = 0): RowCache {
    return new RowCache(allocateRowArena(maxBytes, admission, pageBytes));
  }

  get slots(): number {
    return this.mask + 1;
  }

  /** The first candidate slot of (owner, row). */
  slotOf(owner: RowOwner, row: number): number {
    return (row + owner.spread) & this.mask;
  }

  /** The second candidate slot of (owner, row) (the same as the first with one slot). */
  otherSlotOf(owner: RowOwner, row: number): number {
    return (row + owner.spread2) & this.mask;
  }

  /** Registers generation `gen`'s columns (see RowOwners.register). */
  register(gen: number, columns: readonly Column[]): void {
    this.owners.register(gen, columns);
  }

  /**
   * Copies the text `owner` wrote for `row` to the output `dst` views, at p (room for the
   * row is reserved there), and returns its end, or -1 when the arena does not hold it (the
   * output past p may then hold garbage, which the caller's render overwrites).
   */
  copy(owner: RowOwner, row: number, dst: DataView, p: number): number {
    const first = (row + owner.spread) & this.mask;
    let end = this.copyFrom(first, owner, row, dst, p);
    if (end < 0) {
      const second = (row + owner.spread2) & this.mask;
      if (second !== first) end = this.copyFrom(second, owner, row, dst, p);
    }
    if (end < 0) this.misses++;
    else this.hits++;
    return end;
  }

  /** copy from one slot: the seqlock read. */
  private copyFrom(slot: number, owner: RowOwner, row: number, dv: DataView, p: number): number {
    const t = this.tags;
    const s = slot * TAG_WORDS;
    const seq = Atomics.load(t, s + TAG_SEQ);
    if (
      (seq & 1) !== 0 ||
      seq === 0 ||
      t[s + TAG_ROW] !== row ||
      t[s + TAG_GEN] !== owner.gen ||
      t[s + TAG_LO] !== owner.layoutLo ||
      t[s + TAG_HI] !== owner.layoutHi ||
      t[s + TAG_KIND] !== owner.kind
    )
      return -1;
    const len = t[s + TAG_LEN]!;
    // A torn length (a writer came in) must not write past dst: such a copy is a miss anyway.
    if (len < 0 || len > ROW_SLOT_BYTES || p + len > dv.byteLength) return -1;
    const words = this.words;
    let w = slot * (ROW_SLOT_BYTES >> 3);
    let k = 0;
    // Four words a turn: TurboFan does not unroll, and the loop's own compare and branch
    // were about a third of a row's copy (bench/micro/shared-copy.ts).
    for (; k + 32 <= len; k += 32, w += 4) {
      dv.setFloat64(p + k, words[w]!, LITTLE_ENDIAN);
      dv.setFloat64(p + k + 8, words[w + 1]!, LITTLE_ENDIAN);
      dv.setFloat64(p + k + 16, words[w + 2]!, LITTLE_ENDIAN);
      dv.setFloat64(p + k + 24, words[w + 3]!, LITTLE_ENDIAN);
    }
    for (; k + 8 <= len; k += 8) dv.setFloat64(p + k, words[w++]!, LITTLE_ENDIAN);
    const bytes = this.bytes;
    const at = slot * ROW_SLOT_BYTES;
    for (; k < len; k++) dv.setUint8(p + k, bytes[at + k]!);
    if (FENCE_BEFORE_RECHECK) Atomics.store(this.fence, 0, seq);
    if (Atomics.load(t, s + TAG_SEQ) !== seq) return -1;
    // A hint only (a racing writer may clear or keep it): written when it changes, so hot
    // rows do not make every hit a store to a line other threads read.
    if (t[s + TAG_REF] === 0) t[s + TAG_REF] = 1;
    return p + len;
  }

  /**
   * Keeps the bytes [start, end) of the output `dv` views as the text `owner` wrote for
   * `row`; a row longer than a slot is not kept, nor one whose slot another thread is writing.
   */
  keep(owner: RowOwner, row: number, dv: DataView, start: number, end: number): void {
    const len = end - start;
    if (len > ROW_SLOT_BYTES) return;
    if (this.doorkeeper !== null && !this.doorkeeper.admit(owner.spread, row)) {
      this.declined++;
      return;
    }
    const t = this.tags;
    const slot = this.slotToKeep(owner, row);
    const s = slot * TAG_WORDS;
    const seq = Atomics.load(t, s + TAG_SEQ);
    if ((seq & 1) !== 0 || Atomics.compareExchange(t, s + TAG_SEQ, seq, seq + 1) !== seq) return;
    // An acquiring load after the claim: on weakly ordered CPUs the writes below cannot
    // become visible before the odd version does.
    Atomics.load(t, s + TAG_SEQ);
    if (seq !== 0 && !this.holds(s, owner, row)) this.evictions++;
    const words = this.words;
    let w = slot * (ROW_SLOT_BYTES >> 3);
    let k = 0;
    for (; k + 8 <= len; k += 8) {
      const word = dv.getFloat64(start + k, LITTLE_ENDIAN);
      // Eight bytes that read as a NaN (0xF0-0xFF, then 0x7F or 0xFF) may come back as
      // another NaN where V8 boxes the double: such text is never kept. Valid UTF-8 never
      // has those pairs (a 4-byte lead is followed by a continuation byte; 0xFF is never
      // used), so rendered JSON and CSV always pass; this guards any other text. The slot
      // is half overwritten by now, so it is published under a tag no row has.
      if (word !== word) {
        t[s + TAG_ROW] = -1;
        t[s + TAG_REF] = 0;
        Atomics.store(t, s + TAG_SEQ, seq + 2);
        return;
      }
      words[w++] = word;
    }
    const bytes = this.bytes;
    const at = slot * ROW_SLOT_BYTES;
    for (; k < len; k++) bytes[at + k] = dv.getUint8(start + k);
    t[s + TAG_ROW] = row;
    t[s + TAG_GEN] = owner.gen;
    t[s + TAG_LO] = owner.layoutLo;
    t[s + TAG_HI] = owner.layoutHi;
    t[s + TAG_KIND] = owner.kind;
    t[s + TAG_LEN] = len;
    t[s + TAG_REF] = 1;
    Atomics.store(t, s + TAG_SEQ, seq + 2);
  }

  /**
   * Which candidate slot a kept row goes to: an empty one or one holding this very row,
   * else one whose row was not copied since the last contest, else the second, and both
   * lose their REF (a row that is not copied again before the next contest goes then).
   * Plain reads: a racing writer only makes the choice worse, never the text wrong.
   */
  private slotToKeep(owner: RowOwner, row: number): number {
    const t = this.tags;
    const a = (row + owner.spread) & this.mask;
    const b = (row + owner.spread2) & this.mask;
    const sa = a * TAG_WORDS;
    if (a === b || t[sa + TAG_SEQ] === 0 || this.holds(sa, owner, row)) return a;
    const sb = b * TAG_WORDS;
    if (t[sb + TAG_SEQ] === 0 || this.holds(sb, owner, row)) return b;
    if (t[sa + TAG_REF] === 0) return a;
    if (t[sb + TAG_REF] === 0) return b;
    t[sa + TAG_REF] = 0;
    t[sb + TAG_REF] = 0;
    return b;
  }

  /** Whether the tag at word s is (owner, row): a row kept again (by another thread) evicts nothing. */
  private holds(s: number, owner: RowOwner, row: number): boolean {
    const t = this.tags;
    return (
      t[s + TAG_ROW] === row &&
      t[s + TAG_GEN] === owner.gen &&
      t[s + TAG_LO] === owner.layoutLo &&
      t[s + TAG_HI] === owner.layoutHi &&
      t[s + TAG_KIND] === owner.kind
    );
  }

  stats(): RowCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
      declined: this.declined,
      slots: this.slots,
      pages: this.pages?.stats() ?? null,
    };
  }
}
