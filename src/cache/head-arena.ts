import { copyBytes } from '../format/bytes/byte-writer.js';

/** Bytes of one page: a cached head is a chain of them (a 33 KB walk-forward answer takes 9). */
export const HEAD_PAGE_BYTES = 4096;

/**
 * The bytes of the response cache's heads, in one buffer allocated once, cut into fixed
 * pages. A head is a chain of pages (`next` links them, as in a FAT); freed chains go back
 * to a free list. Nothing is allocated per stored head.
 *
 * Why: the cache used to copy every admitted head into a fresh Buffer. Each copy is a new
 * ArrayBuffer outside the V8 heap that survives into old space (the cache holds it) and is
 * only freed by a full mark-compact once evicted. V8 starts a mark-compact whenever such
 * external memory has grown 64 MB past what the last one left ("external memory pressure"
 * in `--trace-incremental-marking`), so the cache's churn alone caused the full GCs of
 * bench/RESULTS.md ("The p99 tail"). Pages reused in place never count as new external
 * memory.
 */
export class HeadArena {
  /** page i's bytes start at i·HEAD_PAGE_BYTES */
  readonly bytes: Uint8Array;
  /** per page: the next page of its chain, or -1 at the end (free pages chain the free list) */
  private readonly next: Int32Array;
  /** per page: a view of its bytes, made on first use and kept, so copying a whole page out allocates nothing */
  private readonly views: Array<Uint8Array | undefined>;
  private freeHead: number;
  private free: number;
  readonly pages: number;

  /** At least maxBytes (rounded up to whole pages, at least one page). */
  constructor(maxBytes: number) {
    this.pages = Math.max(1, Math.ceil(maxBytes / HEAD_PAGE_BYTES));
    // Zero-filled and untouched: the OS backs a page only when a head is first written to it.
    this.bytes = new Uint8Array(this.pages * HEAD_PAGE_BYTES);
    this.next = new Int32Array(this.pages);
    this.views = new Array<Uint8Array | undefined>(this.pages);
    for (let i = 0; i < this.pages; i++) this.next[i] = i + 1 < this.pages ? i + 1 : -1;
    this.freeHead = 0;
    this.free = this.pages;
  }

  /** Pages a head of n bytes takes. */
  static pagesFor(n: number): number {
    return Math.ceil(n / HEAD_PAGE_BYTES);
  }

  get freePages(): number {
    return this.free;
  }

  /**
   * Copies src[start..end) into a fresh chain and returns its first page (-1 for an empty
   * head). The caller has made sure `pagesFor(end - start)` pages are free.
   */
  store(src: Uint8Array, start = 0, end = src.byteLength): number {
    const n = end - start;
    const need = HeadArena.pagesFor(n);
    if (need > this.free) throw new RangeError(`head of ${n} bytes needs ${need} pages, ${this.free} free`);
    if (need === 0) return -1;
    const first = this.freeHead;
    let page = first;
    let last = first;
    for (let at = 0; at < n; at += HEAD_PAGE_BYTES) {
      copyBytes(this.bytes, page * HEAD_PAGE_BYTES, src, start + at, start + Math.min(n, at + HEAD_PAGE_BYTES));
      last = page;
      page = this.next[page]!;
    }
    this.freeHead = page;
    this.next[last] = -1;
    this.free -= need;
    return first;
  }

  /**
   * Where the chain at `first` starts in `bytes` when its first `pages` pages are consecutive
   * (one run, so a single view holds them), else -1. Chains come out as runs whenever the
   * free list hands out consecutive pages: always in an arena not yet full, and after it
   * fills whenever a head takes the place of one that left a run of its size.
   */
  runOffset(first: number, pages: number): number {
    if (first < 0) return -1;
    let page = first;
    for (let k = 1; k < pages; k++) {
      const next = this.next[page]!;
      if (next !== page + 1) return -1;
      page = next;
    }
    return first * HEAD_PAGE_BYTES;
  }

  /** Copies the n bytes of the chain at `first` into dst at `to` (dst has room). */
  copyOut(first: number, n: number, dst: Uint8Array, to = 0): void {
    let page = first;
    let at = 0;
    for (; at + HEAD_PAGE_BYTES <= n; at += HEAD_PAGE_BYTES) {
      dst.set((this.views[page] ??= this.bytes.subarray(page * HEAD_PAGE_BYTES, (page + 1) * HEAD_PAGE_BYTES)), to + at);
      page = this.next[page]!;
    }
    if (at < n) copyBytes(dst, to + at, this.bytes, page * HEAD_PAGE_BYTES, page * HEAD_PAGE_BYTES + (n - at));
  }

  /** Returns the chain at `first` to the free list. */
  release(first: number): void {
    if (first < 0) return;
    let last = first;
    let n = 1;
    while (this.next[last]! >= 0) {
      last = this.next[last]!;
      n++;
    }
    this.next[last] = this.freeHead;
    this.freeHead = first;
    this.free += n;
  }
}
