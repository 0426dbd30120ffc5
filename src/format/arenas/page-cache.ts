import {
  PAGE_AT,
  PAGE_COUNT,
  PAGE_GEN,
  PAGE_HI,
  PAGE_KEY,
  PAGE_KEY_SHIFT,
  PAGE_KIND,
  PAGE_LO,
  PAGE_MAX_ROWS,
  PAGE_SEQ,
  PAGE_STRIDE,
  PAGE_TAG_WORDS,
  PAGE_TEXT_BYTES,
  type PageArenaMemory,
} from './page-arena.js';
import { RowDoorkeeper } from './row-doorkeeper.js';
import type { RowOwner } from './row-owner.js';

/** What a PageCache has done since it was made, on its thread (the cache events of /metrics' cache="page"). */
export interface PageCacheStats {
  /** lookups (pages of 2 to PAGE_MAX_ROWS rows) that found a page sharing rows with the one asked for */
  readonly hits: number;
  /** lookups that found none */
  readonly misses: number;
  /** rows whose text came from a found page */
  readonly rowsCopied: number;
  /** found pages discarded because a writer came into their slot while they were read (the page was then written row by row) */
  readonly torn: number;
  readonly kept: number;
  /** pages kept into a slot that held another block's or owner's page */
  readonly evictions: number;
  /** pages not kept: their block was not asked for since the doorkeeper was cleared */
  readonly declined: number;
  readonly slots: number;
}

/** Rows of a page looked for in the whole found page before one matches (then only past the last match). */
const ANCHOR_ROWS = 8;
/** How far past the last matched row the next one is looked for. */
const PAGE_SCAN = 16;

/**
 * The key a page is filed under: its first row's block of 2^PAGE_KEY_SHIFT rows, and
 * whether its second row comes soon after (one series, rows ascending) or not (several
 * series interleaved by date): so a one-series question and one over several series that
 * starts with the same series keep their pages apart. The block before is key - 2.
 */
export function pageKey(rows: Int32Array): number {
  const first = rows[0]!;
  const gap = rows[1]! - first;
  return ((first >> PAGE_KEY_SHIFT) << 1) | (gap > 0 && gap <= PAGE_SCAN ? 0 : 1);
}

/** See RowCache's note: weakly ordered CPUs need a store between a read's copies and its version re-read. */
const FENCE_BEFORE_RECHECK = process.arch !== 'x64' && process.arch !== 'ia32';

/**
 * One serving thread's view of the page arena: the last pages of rows written, whole, so
 * that a page sharing most of its rows with one written before (a walk-forward loop's
 * next step: the same rows but the first, and one more) copies them in a few long runs
 * instead of row by row. The row arena (row-cache.ts) copies one row per call, eight bytes
 * a turn through doubles: about half a loop request's time. A run goes through one native
 * copy, eight bytes a load, when source and destination agree modulo 8 (V8 copies shared
 * memory with relaxed atomics, byte by byte otherwise); the text is copied to the offset
 * that agrees and moved down to its place in the output (a memmove within the buffer).
 *
 * A page is its physical rows in its order, the end of each row's text and the text joined
 * as the page wrote it (rows and the separators between them). Each row of the page being
 * written is looked for just past the last row it matched in the found page (find); the
 * text of rows consecutive in both is one run. Text is tagged with the full RowOwner, as in
 * the row arena, so a page never lends text to another generation, layout or format; a key
 * only decides where a page is looked for, never which text it lends.
 *
 * Lock-free, a seqlock per slot as in the row arena: a writer claims the slot by moving its
 * even version to odd, writes, and publishes the next even version; a reader notes the
 * version when it finds the page and re-reads it when the page is written: any change and
 * the page is written again without it. Every length and offset read from the slot is
 * bounded before use, so a torn read can waste work but never write out of bounds.
 */
export class PageCache {
  readonly tags: Int32Array;
  readonly rows: Int32Array;
  readonly ends: Int32Array;
  readonly bytes: Uint8Array;
  readonly slots: number;
  private readonly doorkeeper: RowDoorkeeper;
  private readonly fence = new Int32Array(new SharedArrayBuffer(64));
  /** per row of the page being written: its index in the found page, or -1 */
  readonly match = new Int32Array(PAGE_MAX_ROWS);
  /** per row of the page being written: the end of its text, from the text's start (the writer fills it) */
  readonly written = new Int32Array(PAGE_MAX_ROWS);
  /** the found page's slot and the version it was found at */
  private slot = -1;
  private seq = 0;
  /** where the run runBytes last measured starts in the found page's text */
  private runFrom = 0;
  /** the run runBytes measured last: its first row in the found page, its rows and its bytes (copyRun copies it) */
  private runFirst = 0;
  private runRows = 0;
  private runLength = 0;
  private hits = 0;
  private misses = 0;
  private rowsCopied = 0;
  private torn = 0;
  private kept = 0;
  private evictions = 0;
  private declined = 0;

  constructor(memory: PageArenaMemory) {
    this.tags = new Int32Array(memory.tags);
    this.rows = new Int32Array(memory.rows);
    this.ends = new Int32Array(memory.ends);
    this.bytes = new Uint8Array(memory.bytes);
    this.slots = this.tags.length / PAGE_TAG_WORDS;
    this.doorkeeper = new RowDoorkeeper(memory.seen);
  }

  /** The slot of (owner, key): one per key, spread as the row arena spreads rows. */
  slotOf(owner: RowOwner, key: number): number {
    return ((key + owner.spread) >>> 0) % this.slots;
  }

  /**
   * Looks for a page of `owner` sharing rows with rows[0..count) (2 to PAGE_MAX_ROWS physical
   * rows): under its key (pageKey), then under the block before.
   * Fills `match` and returns how many rows matched (0: nothing to copy; `match` is then not to be read).
   */
  find(owner: RowOwner, rows: Int32Array, count: number): number {
    this.slot = -1;
    const key = pageKey(rows);
    let slot = this.slotOf(owner, key);
    let seq = this.versionOf(slot, owner, key);
    if (seq < 0) {
      slot = this.slotOf(owner, key - 2);
      seq = this.versionOf(slot, owner, key - 2);
      if (seq < 0) {
        this.misses++;
        return 0;
      }
    }
    const t = this.tags;
    const s = slot * PAGE_TAG_WORDS;
    const found = t[s + PAGE_COUNT]!;
    if (found < 1 || found > PAGE_MAX_ROWS) {
      this.misses++;
      return 0;
    }
    const prows = this.rows;
    const base = slot * PAGE_MAX_ROWS;
    const match = this.match;
    // Each row is looked for just past the last row matched: a loop's step is the found
    // page shifted by a row or more, with a row here and there replaced by its revision, in
    // either order of section 2 (one series ascending, or several interleaved by date).
    // Until a first match the whole page is searched, for a few rows only; then
    // PAGE_SCAN rows on, so a page sharing little costs little.
    let j = -1;
    let matched = 0;
    for (let i = 0; i < count; i++) {
      const r = rows[i]!;
      let k = j + 1;
      const end = matched === 0 && i < ANCHOR_ROWS ? found : Math.min(found, k + PAGE_SCAN);
      while (k < end && prows[base + k] !== r) k++;
      if (k < end) {
        match[i] = k;
        j = k;
        matched++;
      } else match[i] = -1;
    }
    if (matched === 0) {
      this.misses++;
      return 0;
    }
    this.hits++;
    this.slot = slot;
    this.seq = seq;
    return matched;
  }

  /** The version of a stable slot tagged (owner, key), or -1. */
  private versionOf(slot: number, owner: RowOwner, key: number): number {
    const s = slot * PAGE_TAG_WORDS;
    const seq = Atomics.load(this.tags, s + PAGE_SEQ);
    if ((seq & 1) !== 0 || seq === 0 || !this.holds(s, owner, key)) return -1;
    return seq;
  }

  /** Whether the tag at word s is (owner, key). */
  private holds(s: number, owner: RowOwner, key: number): boolean {
    const t = this.tags;
    return (
      t[s + PAGE_KEY] === key &&
      t[s + PAGE_GEN] === owner.gen &&
      t[s + PAGE_LO] === owner.layoutLo &&
      t[s + PAGE_HI] === owner.layoutHi &&
      t[s + PAGE_KIND] === owner.kind
    );
  }

  /**
   * Bytes of the found page's rows j..j+n-1 with the separators between them, or -1 when
   * the slot's ends do not describe such a run (a torn read). Notes the run for copyRun.
   */
  runBytes(j: number, n: number): number {
    const base = this.slot * PAGE_MAX_ROWS;
    const from = j === 0 ? 0 : this.ends[base + j - 1]! + 1;
    const to = this.ends[base + j + n - 1]!;
    if (from < 0 || to < from || to > PAGE_TEXT_BYTES) return -1;
    this.runFrom = from;
    this.runFirst = j;
    this.runRows = n;
    this.runLength = to - from;
    return to - from;
  }

  /**
   * Copies the run runBytes measured last (its length; dst has room for it + 8 at p) to dst
   * at p, records the rows' ends in `written` from index i (relative to `start`, where the
   * page's text starts in dst), and returns the end.
   */
  copyRun(dst: Buffer, p: number, i: number, start: number): number {
    const slot = this.slot;
    const from = this.runFrom;
    const j = this.runFirst;
    const n = this.runRows;
    const len = this.runLength;
    const src = slot * PAGE_STRIDE + (this.tags[slot * PAGE_TAG_WORDS + PAGE_AT]! & 7) + from;
    // The offset at or past p that agrees with src modulo 8 (dst's memory starts 8-aligned).
    const q = p + ((src - dst.byteOffset - p) & 7);
    dst.set(this.bytes.subarray(src, src + len), q);
    if (q !== p) dst.copyWithin(p, q, q + len);
    const shift = p - start - from;
    const ends = this.ends;
    const base = slot * PAGE_MAX_ROWS + j;
    const written = this.written;
    for (let k = 0; k < n; k++) written[i + k] = ends[base + k]! + shift;
    this.rowsCopied += n;
    return p + len;
  }

  /** Whether no writer came into the found page's slot since it was found. */
  stillValid(): boolean {
    if (FENCE_BEFORE_RECHECK) Atomics.store(this.fence, 0, this.seq);
    if (Atomics.load(this.tags, this.slot * PAGE_TAG_WORDS + PAGE_SEQ) === this.seq) return true;
    this.torn++;
    return false;
  }

  /**
   * Keeps the page just written (rows[0..count), ascending; its text `text`, each row's end
   * in `written`) under its first row's block, when that block was asked for before (the
   * doorkeeper) and no other thread is writing the slot.
   */
  keep(owner: RowOwner, rows: Int32Array, count: number, text: Uint8Array): void {
    const len = text.byteLength;
    if (len > PAGE_TEXT_BYTES || count > PAGE_MAX_ROWS) return;
    const key = pageKey(rows);
    if (!this.doorkeeper.admit(owner.spread ^ 0x5a5a5a5a, key)) {
      this.declined++;
      return;
    }
    const slot = this.slotOf(owner, key);
    const t = this.tags;
    const s = slot * PAGE_TAG_WORDS;
    const seq = Atomics.load(t, s + PAGE_SEQ);
    if ((seq & 1) !== 0 || Atomics.compareExchange(t, s + PAGE_SEQ, seq, seq + 1) !== seq) return;
    Atomics.load(t, s + PAGE_SEQ);
    if (seq !== 0 && !this.holds(s, owner, key)) this.evictions++;
    const at = text.byteOffset & 7;
    this.bytes.set(text, slot * PAGE_STRIDE + at);
    this.rows.set(rows.subarray(0, count), slot * PAGE_MAX_ROWS);
    this.ends.set(this.written.subarray(0, count), slot * PAGE_MAX_ROWS);
    t[s + PAGE_KEY] = key;
    t[s + PAGE_GEN] = owner.gen;
    t[s + PAGE_LO] = owner.layoutLo;
    t[s + PAGE_HI] = owner.layoutHi;
    t[s + PAGE_KIND] = owner.kind;
    t[s + PAGE_COUNT] = count;
    t[s + PAGE_AT] = at;
    Atomics.store(t, s + PAGE_SEQ, seq + 2);
    this.kept++;
  }

  stats(): PageCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      rowsCopied: this.rowsCopied,
      torn: this.torn,
      kept: this.kept,
      evictions: this.evictions,
      declined: this.declined,
      slots: this.slots,
    };
  }
}
