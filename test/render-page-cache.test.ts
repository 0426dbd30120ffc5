import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import {
  allocatePageArena,
  PAGE_AT,
  PAGE_COUNT,
  PAGES_SEEN_MIN,
  PAGE_MAX_ROWS,
  PAGE_SEQ,
  PAGE_SLOT_COST,
  PAGE_STRIDE,
  PAGE_TAG_WORDS,
} from '../src/format/arenas/page-arena.js';
import { pageKey, type PageCache } from '../src/format/arenas/page-cache.js';
import { allocateRowArena, type RowArenaMemory } from '../src/format/arenas/row-arena.js';
import { RowCache } from '../src/format/arenas/row-cache.js';
import { ROW_FORMAT_CSV, ROW_FORMAT_JSON, ROW_LAYOUT_ALL, RowOwner } from '../src/format/arenas/row-owner.js';
import { RowRenderer } from '../src/format/json/row-renderer.js';
import type { Column } from '../src/store/column.js';
import { rowRequests, rowTable, ROWS } from './support/row-tables.js';

/** A renderer of `columns` (of generation `gen`, whose table is `all`) tagged as every thread tags it. */
function rendererIn(cache: RowCache, gen: number, all: readonly Column[], columns: readonly Column[] = all): RowRenderer {
  cache.register(gen, all);
  return new RowRenderer({ columns }, cache.owners.ownerOf(columns, ROW_FORMAT_JSON));
}

function plain(renderer: RowRenderer, rows: Int32Array): string {
  const out = new ByteWriter(16);
  renderer.writeRows(out, rows, rows.length);
  return Buffer.from(out.view()).toString('utf8');
}

/** writeRowsCached after `offset` bytes of filler (the page then lands at every offset modulo 8); the page's text. */
function cached(renderer: RowRenderer, rows: Int32Array, cache: RowCache, offset = 0, out = new ByteWriter(16)): string {
  out.reset();
  out.ascii('#'.repeat(offset));
  renderer.writeRowsCached(out, rows, rows.length, cache);
  const text = Buffer.from(out.view()).toString('utf8');
  expect(text.slice(0, offset)).toBe('#'.repeat(offset));
  return text.slice(offset);
}

/** A walk-forward loop over a table with revisions: [from+d, from+d+width) for each step d, without the superseded versions (every row ≡ 3 mod 7). */
function loop(steps: number, width = 60, from = 10): Int32Array[] {
  const out: Int32Array[] = [];
  for (let d = 0; d < steps; d++) {
    const rows: number[] = [];
    for (let r = from + d; r < from + d + width; r++) if (r % 7 !== 3) rows.push(r);
    out.push(Int32Array.from(rows));
  }
  return out;
}

const withPages = (slots: number, rowBytes = 4 * 1024 * 1024): RowCache => RowCache.allocate(rowBytes, 'first', slots * PAGE_SLOT_COST);
const pagesOf = (cache: RowCache): PageCache => cache.pages!;

describe('PageCache (whole pages of rows, copied in runs into the next page that shares them)', () => {
  it('writes exactly the bytes of a render without it, at every arena size, with or without a row arena, at every offset modulo 8', () => {
    const requests = [
      ...loop(40),
      ...rowRequests(3),
      Int32Array.from({ length: 30 }, (_, i) => 200 - i), // descending
      Int32Array.from([5, 5, 6, 6, 7]), // repeats
      Int32Array.from({ length: PAGE_MAX_ROWS }, (_, i) => i % ROWS),
    ];
    for (const slots of [0, 1, 3, 64]) {
      for (const rowBytes of [0, 4 * 1024 * 1024]) {
        const cache = withPages(slots, rowBytes);
        expect(cache.pages === null).toBe(slots === 0);
        const renderer = rendererIn(cache, 1, rowTable(1));
        const out = new ByteWriter(16);
        for (let k = 0; k < requests.length; k++) {
          const rows = requests[k]!;
          expect(cached(renderer, rows, cache, k % 8, out), `${slots} slots, ${rowBytes} row bytes, request ${k}`).toBe(plain(renderer, rows));
        }
        if (slots > 0) expect(pagesOf(cache).stats().rowsCopied).toBeGreaterThan(1000);
      }
    }
  });

  it("copies a loop's rows from the page its last steps wrote: most rows, in runs", () => {
    const cache = withPages(1, 0); // no row arena: every row not copied from a page is rendered
    const renderer = rendererIn(cache, 1, rowTable(2));
    const steps = loop(30);
    for (const rows of steps) cached(renderer, rows, cache);
    const stats = pagesOf(cache).stats();
    const rows = steps.reduce((n, r) => n + r.length, 0);
    // Two steps before the first page is kept (the doorkeeper), then all but the new rows.
    expect(stats.declined).toBe(1);
    expect(stats.misses).toBe(2);
    expect(stats.hits).toBe(28);
    expect(stats.rowsCopied).toBeGreaterThan(0.85 * rows);
    expect(stats.torn).toBe(0);
    // Kept again once it has fallen 1/8 behind, not on every step.
    expect(stats.kept).toBeGreaterThan(2);
    expect(stats.kept).toBeLessThan(10);
  });

  it('serves the text the page holds: a page changed in place shows in the next step', () => {
    const cache = withPages(1, 0);
    const renderer = rendererIn(cache, 1, rowTable(2));
    const [a, b, c] = loop(3);
    cached(renderer, a!, cache);
    cached(renderer, b!, cache); // kept
    const bytes = pagesOf(cache).bytes;
    const text = Buffer.from(bytes.subarray(0, PAGE_STRIDE)).toString('latin1');
    const at = text.indexOf('"label":"bb"');
    expect(at).toBeGreaterThan(0);
    bytes.set(Buffer.from('"label":"BB"', 'latin1'), at);
    expect(cached(renderer, c!, cache)).toContain('"label":"BB"');
    expect(plain(renderer, c!)).not.toContain('"label":"BB"');
  });

  it('shares pages between two views of one arena (two threads): one thread finds what the other kept', () => {
    const memory = allocateRowArena(0, 'first', 4 * PAGE_SLOT_COST);
    const [ta, tb] = [new RowCache(memory), new RowCache(memory)];
    const ra = rendererIn(ta, 7, rowTable(3));
    const rb = rendererIn(tb, 7, rowTable(3));
    const [a, b, c] = loop(3);
    cached(ra, a!, ta);
    cached(ra, b!, ta);
    expect(cached(rb, c!, tb)).toBe(plain(rb, c!));
    expect(pagesOf(tb).stats()).toMatchObject({ hits: 1, misses: 0, torn: 0 });
    expect(pagesOf(tb).stats().rowsCopied).toBe(c!.length - 1);
  });

  it('never lends a page to another generation or layout, even in the same slot', () => {
    const memory = allocateRowArena(0, 'first', PAGE_SLOT_COST);
    const [ta, tb] = [new RowCache(memory), new RowCache(memory)];
    const cols = rowTable(4);
    const renderers = [rendererIn(ta, 1, cols), rendererIn(tb, 2, rowTable(5)), rendererIn(ta, 1, cols, [cols[0]!, cols[2]!])];
    const views = [ta, tb, ta];
    for (const rows of loop(12)) for (let k = 0; k < renderers.length; k++) expect(cached(renderers[k]!, rows, views[k]!)).toBe(plain(renderers[k]!, rows));
  });

  it('finds a page only under its exact tag: generation, layout bits, format and block', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const owner = new RowOwner(3, 0x5, 0x1, ROW_FORMAT_JSON);
    const renderer = new RowRenderer({ columns: rowTable(6) }, owner);
    const rows = Int32Array.from({ length: 20 }, (_, i) => 100 + i); // block 1 (rows 64-127)
    cached(renderer, rows, cache);
    cached(renderer, rows, cache);
    expect(pages.stats().kept).toBe(1);
    expect(pages.find(owner, rows, rows.length)).toBe(20);
    const others = [
      new RowOwner(4, 0x5, 0x1, ROW_FORMAT_JSON),
      new RowOwner(3, 0x4, 0x1, ROW_FORMAT_JSON),
      new RowOwner(3, 0x5, 0x3, ROW_FORMAT_JSON),
      new RowOwner(3, 0x5, 0x1, ROW_FORMAT_CSV),
      new RowOwner(3, 0x5, 0x1, ROW_FORMAT_JSON | ROW_LAYOUT_ALL),
    ];
    for (const other of others) expect(pages.find(other, rows, rows.length)).toBe(0);
    // The next block finds it (a loop just past a block's end); two blocks on does not,
    // though the rows it asks for are in the page.
    expect(pages.find(owner, rows.subarray(10), 10)).toBe(10); // rows 110-119: block 1
    const later = Int32Array.from([128, 129, 130]); // block 2: its own, then block 1
    expect(pages.find(owner, Int32Array.from([119, 128]), 2)).toBe(1);
    expect(pages.find(owner, later, 3)).toBe(0);
    const farther = Int32Array.from([192, 193]); // block 3: blocks 3 and 2 only
    expect(pages.find(owner, farther, 2)).toBe(0);
    // Found under its key but sharing no row: a miss.
    const misses = pages.stats().misses;
    expect(pages.find(owner, Int32Array.from([64, 65]), 2)).toBe(0);
    expect(pages.stats()).toMatchObject({ misses: misses + 1, hits: 3 });
  });

  it('does not use a page whose key is another block even when it holds the rows asked for', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(7));
    const owner = renderer.owner!;
    // A page starting in block 0 that also holds rows of block 3.
    const rows = Int32Array.from([...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 200 + i)]);
    cached(renderer, rows, cache);
    cached(renderer, rows, cache);
    expect(pages.stats().kept).toBe(1);
    expect(pages.find(owner, rows.subarray(10), 10)).toBe(0);
    expect(pages.find(owner, rows, 20)).toBe(20);
  });

  it('does not read a slot a writer holds (odd version) nor one never written', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(8));
    const rows = Int32Array.from({ length: 20 }, (_, i) => 10 + i);
    expect(pages.find(renderer.owner!, rows, 20)).toBe(0);
    cached(renderer, rows, cache);
    cached(renderer, rows, cache);
    expect(pages.find(renderer.owner!, rows, 20)).toBe(20);
    pages.tags[PAGE_SEQ]! += 1;
    expect(pages.find(renderer.owner!, rows, 20)).toBe(0);
    const held = pages.tags[PAGE_SEQ]!;
    expect(cached(renderer, rows, cache)).toBe(plain(renderer, rows)); // and its keep leaves the slot alone
    expect(pages.tags[PAGE_SEQ]).toBe(held);
  });

  it('writes a page again row by row when its ends were torn', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(9));
    const [a, b, c] = loop(3);
    cached(renderer, a!, cache);
    cached(renderer, b!, cache);
    const saved = pages.ends.slice();
    const count = pages.tags[PAGE_COUNT]!;
    // c is b without its first row: one run, from b's second row (its start is ends[0] + 1) to its last.
    const tears: [string, (ends: Int32Array) => void][] = [
      ['a negative start', (e) => (e[0] = -7)],
      ['an end past the slot', (e) => (e[count - 1] = 1 << 30)],
      ['an end before the start', (e) => (e[count - 1] = e[0]!)],
      ['every end garbage', (e) => e.fill(1 << 30)],
    ];
    for (const [what, tear] of tears) {
      pages.ends.set(saved);
      tear(pages.ends);
      expect(cached(renderer, c!, cache), what).toBe(plain(renderer, c!));
    }
    expect(pages.stats().rowsCopied).toBe(0);
  });

  it('never reads past the rows of the found page (a longer page written into its slot before)', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(14));
    const out = new ByteWriter(1 << 20); // unpooled: its memory starts 8-aligned, so offsets set the text's AT
    const long = Int32Array.from({ length: 40 }, (_, i) => 10 + i);
    const short = Int32Array.from({ length: 10 }, (_, i) => 10 + i);
    cached(renderer, long, cache, 0, out);
    cached(renderer, long, cache, 0, out);
    expect(pages.tags[PAGE_AT]).toBe(1); // after the '['
    // The short page kept over it (the long one forgotten first, or the short one, sharing
    // all its rows, would not be kept), its text 3 bytes later modulo 8: past its 10 rows the
    // slot still holds the long page's rows and ends, which no longer describe the text.
    pages.tags[PAGE_COUNT] = 0;
    cached(renderer, short, cache, 3, out);
    expect(pages.tags[PAGE_COUNT]).toBe(10);
    expect(pages.tags[PAGE_AT]).toBe(4);
    expect(pages.rows[30]).toBe(40);
    const next = Int32Array.from({ length: 30 }, (_, i) => 10 + i);
    expect(cached(renderer, next, cache, 0, out)).toBe(plain(renderer, next));
    expect(pages.stats().rowsCopied).toBe(10);
  });

  it('never copies a row the found page lacks, nor a page whose row count is torn', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(15));
    const kept = Int32Array.from({ length: 40 }, (_, i) => 10 + i);
    cached(renderer, kept, cache);
    cached(renderer, kept, cache);
    expect(pages.find(renderer.owner!, kept, 40)).toBe(40);
    // 5 is not in the page; 12 to 16 are, in one run.
    const asked = Int32Array.from([5, 12, 13, 14, 15, 16]);
    expect(cached(renderer, asked, cache)).toBe(plain(renderer, asked));
    expect(pages.stats().rowsCopied).toBe(5);
    expect(pages.find(renderer.owner!, asked, 6)).toBe(6); // kept in its turn (it took 5 of 6)
    const misses = pages.stats().misses;
    pages.tags[PAGE_COUNT] = PAGE_MAX_ROWS + 1;
    expect(pages.find(renderer.owner!, asked, 6)).toBe(0);
    pages.tags[PAGE_COUNT] = 0;
    expect(pages.find(renderer.owner!, asked, 6)).toBe(0);
    expect(pages.stats().misses).toBe(misses + 2);
  });

  it('copies a page asked for again whole, from its first row', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(16));
    const rows = Int32Array.from({ length: 40 }, (_, i) => 10 + i);
    for (let k = 0; k < 3; k++) expect(cached(renderer, rows, cache, k)).toBe(plain(renderer, rows));
    expect(pages.stats()).toMatchObject({ hits: 1, rowsCopied: 40, kept: 1 });
  });

  it('copies runs of 4 rows or more from a page, shorter ones row by row', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(17));
    const kept = Int32Array.from({ length: 40 }, (_, i) => 10 + i);
    cached(renderer, kept, cache);
    cached(renderer, kept, cache);
    const four = Int32Array.from([10, 11, 12, 13, 100, 101]);
    expect(cached(renderer, four, cache)).toBe(plain(renderer, four));
    expect(pages.stats()).toMatchObject({ hits: 1, rowsCopied: 4 });
    // `four` is kept now (it took 4 of 6): the next shares a run of 3 with it.
    const three = Int32Array.from([10, 11, 12, 100, 102]);
    expect(cached(renderer, three, cache)).toBe(plain(renderer, three));
    expect(pages.stats()).toMatchObject({ hits: 2, rowsCopied: 4 });
  });

  it('keeps and finds a page of PAGE_MAX_ROWS rows', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(18));
    const big = Int32Array.from({ length: PAGE_MAX_ROWS }, (_, i) => i % ROWS);
    cached(renderer, big, cache);
    cached(renderer, big, cache);
    expect(pages.stats().kept).toBe(1);
    expect(cached(renderer, big, cache)).toBe(plain(renderer, big));
    expect(pages.stats().rowsCopied).toBe(PAGE_MAX_ROWS);
  });

  it('falls back to the block before: a step whose first row crossed into the next block finds the last page', () => {
    const cache = withPages(3, 0); // (a number of slots that tells key - 2 from key + 2 apart)
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(19));
    const kept = Int32Array.from({ length: 20 }, (_, i) => 100 + i); // block 1
    cached(renderer, kept, cache);
    cached(renderer, kept, cache);
    // First row in block 2, then rows of block 1 (several series interleaved start anywhere).
    const asked = Int32Array.from([130, 131, 100, 101, 102, 103]);
    expect(pages.find(renderer.owner!, asked, asked.length)).toBe(4);
    expect(cached(renderer, asked, cache)).toBe(plain(renderer, asked));
    expect(pages.stats().rowsCopied).toBe(4);
  });

  it('files one-series pages and pages over several series under different keys', () => {
    expect(pageKey(Int32Array.from([100, 101]))).toBe(2); // block 1, one series
    expect(pageKey(Int32Array.from([100, 116]))).toBe(2); // a gap of PAGE_SCAN rows: still one series
    expect(pageKey(Int32Array.from([100, 117]))).toBe(3);
    expect(pageKey(Int32Array.from([100, 100]))).toBe(3);
    expect(pageKey(Int32Array.from([100, 99]))).toBe(3);
    expect(pageKey(Int32Array.from([63, 64]))).toBe(0);
    expect(pageKey(Int32Array.from([64, 65]))).toBe(2);
  });

  it('writes a page again row by row when a writer came into its slot while it was copied', () => {
    const memory = allocateRowArena(0, 'first', PAGE_SLOT_COST);
    /** A row arena whose every copy is where another thread's writer would have claimed and published the page slot. */
    class Meddled extends RowCache {
      override copy(...args: Parameters<RowCache['copy']>): number {
        this.pages!.tags[PAGE_SEQ]! += 2;
        return super.copy(...args);
      }
    }
    const cache = new Meddled(memory);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(10));
    const rows = Int32Array.from({ length: 30 }, (_, i) => 10 + i);
    cached(renderer, rows, cache);
    cached(renderer, rows, cache);
    // The page's text as a half-finished writer left it (the same length, other bytes)...
    const text = Buffer.from(pages.bytes.subarray(0, PAGE_STRIDE)).toString('latin1');
    const at = text.indexOf('"label":"bb"');
    pages.bytes.set(Buffer.from('"label":"BB"', 'latin1'), at);
    // ...copied in a run, then the version moved when the next row went to the row arena.
    const next = Int32Array.from([...rows, 41]);
    expect(cached(renderer, next, cache)).toBe(plain(renderer, next));
    expect(pages.stats().torn).toBe(1);
  });

  it('neither looks up nor keeps pages of one row or of more than PAGE_MAX_ROWS', () => {
    const cache = withPages(4, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(11));
    const long = Int32Array.from({ length: PAGE_MAX_ROWS + 1 }, (_, i) => i % ROWS);
    for (const rows of [Int32Array.from([3]), long, Int32Array.from([3]), long]) expect(cached(renderer, rows, cache)).toBe(plain(renderer, rows));
    expect(pages.stats()).toMatchObject({ hits: 0, misses: 0, kept: 0, declined: 0 });
  });

  it('does not keep a page whose text is longer than a slot', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(12, 1)); // every label longer than 512 bytes
    const rows = Int32Array.from({ length: 300 }, (_, i) => i);
    for (let k = 0; k < 3; k++) expect(cached(renderer, rows, cache)).toBe(plain(renderer, rows));
    expect(pages.stats()).toMatchObject({ kept: 0, hits: 0, misses: 3 });
  });

  it("keeps a page on its block's second asking (the doorkeeper), and counts a page kept over another as an eviction", () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const renderer = rendererIn(cache, 1, rowTable(13));
    const first = Int32Array.from({ length: 20 }, (_, i) => 10 + i);
    const other = Int32Array.from({ length: 20 }, (_, i) => 300 + i);
    cached(renderer, first, cache);
    expect(pages.stats()).toMatchObject({ declined: 1, kept: 0 });
    cached(renderer, first, cache);
    expect(pages.stats()).toMatchObject({ declined: 1, kept: 1, evictions: 0 });
    cached(renderer, other, cache);
    cached(renderer, other, cache);
    expect(pages.stats()).toMatchObject({ declined: 2, kept: 2, evictions: 1 });
    expect(pages.find(renderer.owner!, first, 20)).toBe(0);
    expect(pages.find(renderer.owner!, other, 20)).toBe(20);
  });

  it('forgets the blocks it saw after PAGES_SEEN_MIN marks: a block asked again much later is declined again', () => {
    const cache = withPages(1, 0);
    const pages = pagesOf(cache);
    const columns = rowTable(20);
    const rows = Int32Array.from({ length: 20 }, (_, i) => 10 + i);
    // Owners of other generations: other pages to the doorkeeper, the same bytes.
    const renderer = (gen: number): RowRenderer => new RowRenderer({ columns }, new RowOwner(gen, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL));
    const first = renderer(1);
    cached(first, rows, cache);
    expect(pages.stats()).toMatchObject({ declined: 1, kept: 0 });
    // Each declined page is a mark; the PAGES_SEEN_MIN-th clears every mark.
    for (let gen = 2; pages.stats().declined < PAGES_SEEN_MIN; gen++) cached(renderer(gen), rows, cache);
    cached(first, rows, cache);
    expect(pages.stats().declined).toBe(PAGES_SEEN_MIN + 1);
    cached(first, rows, cache);
    expect(pages.find(first.owner!, rows, rows.length)).toBe(rows.length);
  });

  it('is made only when at least one slot fits its budget: 248 slots of 128 KiB and 512 rows in 32 MiB', () => {
    // A slot: 128 KiB + 8 of text, 512 rows and their ends, 16 tag words.
    expect(allocatePageArena(135_240)!.tags.byteLength).toBe(PAGE_TAG_WORDS * 4);
    expect(allocatePageArena(135_239)).toBeNull();
    const pages = allocatePageArena(32 * 1024 * 1024)!;
    // Its doorkeeper: 8 bits a mark, cleared after max(4 marks per slot, 1,024) marks.
    expect(pages.seen.byteLength).toBe(4 + 8192 / 8);
    expect(allocatePageArena(1 << 30)!.seen.byteLength).toBe(4 + 262_144 / 8); // 7,939 slots
    expect(pages.tags.byteLength).toBe(248 * PAGE_TAG_WORDS * 4);
    expect(pages.bytes.byteLength).toBe(248 * (128 * 1024 + 8));
    expect(pages.rows.byteLength).toBe(248 * 512 * 4);
    expect(pages.ends.byteLength).toBe(248 * 512 * 4);

    expect(allocateRowArena(1024, 'first', PAGE_SLOT_COST - 1).pages).toBeNull();
    const memory: RowArenaMemory = allocateRowArena(1024, 'first', 3 * PAGE_SLOT_COST + 100);
    expect(new RowCache(memory).pages!.slots).toBe(3);
    expect(memory.pages!.tags.byteLength).toBe(3 * PAGE_TAG_WORDS * 4);
    expect(RowCache.allocate(1024).pages).toBeNull();
    expect(RowCache.allocate(1024).stats().pages).toBeNull();
  });
});
