import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { allocateRowArena, ROW_SLOT_BYTES } from '../src/format/arenas/row-arena.js';
import { RowCache } from '../src/format/arenas/row-cache.js';
import { allocateDoorkeeper, RowDoorkeeper } from '../src/format/arenas/row-doorkeeper.js';
import { ROW_FORMAT_JSON } from '../src/format/arenas/row-owner.js';
import { RowRenderer } from '../src/format/json/row-renderer.js';
import { rowTable as table } from './support/row-tables.js';

function rendererIn(cache: RowCache, gen: number): RowRenderer {
  const columns = table(1);
  cache.register(gen, columns);
  return new RowRenderer({ columns }, cache.owners.ownerOf(columns, ROW_FORMAT_JSON));
}

function render(renderer: RowRenderer, rows: Int32Array, cache: RowCache | null): string {
  const out = new ByteWriter(16);
  if (cache === null) renderer.writeRows(out, rows, rows.length);
  else renderer.writeRowsCached(out, rows, rows.length, cache);
  return Buffer.from(out.view()).toString('utf8');
}

const ROWS = Int32Array.from({ length: 40 }, (_, i) => i);

describe("row admission 'second': a rendered row is kept on its second render", () => {
  it('declines a first render, keeps the second, copies the third; the text is the same each time', () => {
    const cache = new RowCache(allocateRowArena(1024 * 1024, 'second'));
    const renderer = rendererIn(cache, 1);
    const want = render(renderer, ROWS, null);
    expect(render(renderer, ROWS, cache)).toBe(want);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 40, declined: 40 });
    expect(render(renderer, ROWS, cache)).toBe(want);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 80, declined: 40 });
    expect(render(renderer, ROWS, cache)).toBe(want);
    expect(cache.stats()).toMatchObject({ hits: 40, misses: 80, declined: 40 });
  });

  it("'first' keeps at once (no doorkeeper memory)", () => {
    const memory = allocateRowArena(1024 * 1024, 'first');
    expect(memory.seen).toBeNull();
    const cache = new RowCache(memory);
    const renderer = rendererIn(cache, 1);
    render(renderer, ROWS, cache);
    render(renderer, ROWS, cache);
    expect(cache.stats()).toMatchObject({ hits: 40, misses: 40, declined: 0 });
  });

  it('is shared by the views of one arena: a row one thread rendered once is kept when another renders it', () => {
    const memory = allocateRowArena(1024 * 1024, 'second');
    const [a, b] = [new RowCache(memory), new RowCache(memory)];
    const [ra, rb] = [rendererIn(a, 1), rendererIn(b, 1)];
    render(ra, ROWS, a);
    render(rb, ROWS, b);
    expect(b.stats()).toMatchObject({ hits: 0, misses: 40, declined: 0 });
    render(ra, ROWS, a);
    expect(a.stats()).toMatchObject({ hits: 40, misses: 40, declined: 40 });
  });

  it('tells owners apart: a row seen under one generation is new under the next', () => {
    const cache = new RowCache(allocateRowArena(1024 * 1024, 'second'));
    render(rendererIn(cache, 1), ROWS, cache);
    const next = rendererIn(cache, 2);
    render(next, ROWS, cache);
    // Hashes of (spread, row) may meet for a few rows; most of generation 2's are new.
    expect(cache.stats().declined).toBeGreaterThan(40 + 30);
  });

  it('forgets everything once it has marked as many rows as it is sized for (at least the arena)', () => {
    for (const slots of [1, 1 << 17]) {
      const d = new RowDoorkeeper(allocateDoorkeeper(slots));
      expect(d.rowsPerClear).toBeGreaterThanOrEqual(Math.max(slots, 1 << 16));
      expect(d.rowsPerClear).toBeLessThan(2 * Math.max(slots, 1 << 16));
      expect(d.admit(7, 0)).toBe(false);
      expect(d.admit(7, 0)).toBe(true);
      expect(d.marked).toBe(1);
      let row = 1;
      let before = d.marked;
      for (; row < 4 * d.rowsPerClear; row++) {
        d.admit(7, row);
        if (d.marked < before) break;
        before = d.marked;
      }
      // Cleared at the mark that reached the size: row 0 is new again.
      expect(before).toBe(d.rowsPerClear - 1);
      expect(d.marked).toBe(0);
      expect(d.admit(7, 0)).toBe(false);
    }
  });

  it('sizes its memory from the arena: 8 bits per row it can hold, at least 2^16 rows', () => {
    expect(allocateDoorkeeper(1).byteLength).toBe(4 + (1 << 19) / 8);
    expect(allocateDoorkeeper(1 << 17).byteLength).toBe(4 + (1 << 20) / 8);
    expect(allocateRowArena(ROW_SLOT_BYTES * (1 << 17), 'second').seen!.byteLength).toBe(4 + (1 << 20) / 8);
  });
});
