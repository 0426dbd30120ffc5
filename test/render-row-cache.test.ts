import { describe, expect, it } from 'vitest';
import type { Column } from '../src/store/column.js';
import { buildStringDictionary } from '../src/store/string-dictionary.js';
import { ByteWriter } from '../src/render/byte-writer.js';
import { ROW_SLOT_BYTES, RowCache } from '../src/render/row-cache.js';
import { RowRenderer } from '../src/render/row-renderer.js';
import { rng } from './support/rng.js';

const ROWS = 500;

function table(seed: number, longEvery = 0): { columns: Column[] } {
  const r = rng(seed);
  const words = ['a', 'bb', 'ü"x', 'x'.repeat(ROW_SLOT_BYTES)];
  return {
    columns: [
      { kind: 'date32', name: 'date', validity: null, values: Int32Array.from({ length: ROWS }, (_, i) => 19000 + i) },
      {
        kind: 'timestamp',
        name: 'str_observed_at',
        unit: 'us',
        validity: null,
        values: Float64Array.from({ length: ROWS }, () => 1.7e15 + Math.floor(r() * 1e13)),
      },
      { kind: 'float', name: 'value', validity: null, values: Float64Array.from({ length: ROWS }, () => Math.round((r() - 0.5) * 1e5) / 100 + seed) },
      {
        kind: 'string',
        name: 'label',
        validity: null,
        codes: Int32Array.from({ length: ROWS }, (_, i) => (longEvery > 0 && i % longEvery === 0 ? 3 : i % 3)),
        dict: buildStringDictionary(words),
      },
    ],
  };
}

function plain(renderer: RowRenderer, rows: Int32Array): string {
  const out = new ByteWriter(16);
  renderer.writeRows(out, rows, rows.length);
  return Buffer.from(out.view()).toString('utf8');
}

function cached(renderer: RowRenderer, rows: Int32Array, cache: RowCache, out = new ByteWriter(16)): string {
  out.reset();
  renderer.writeRowsCached(out, rows, rows.length, cache);
  return Buffer.from(out.view()).toString('utf8');
}

/** Walk-forward windows of 40 rows stepping by one, then random row lists with repeats. */
function requests(seed: number): Int32Array[] {
  const r = rng(seed);
  const out: Int32Array[] = [];
  for (let d = 0; d < 60; d++) out.push(Int32Array.from({ length: 40 }, (_, i) => 100 + d + i));
  for (let n = 0; n < 60; n++) out.push(Int32Array.from({ length: 1 + Math.floor(r() * 50) }, () => Math.floor(r() * ROWS)));
  return out;
}

describe('RowCache (rendered rows reused across requests)', () => {
  it('writes exactly the bytes of an uncached render, at every cache size (1 slot to all rows)', () => {
    const renderer = new RowRenderer(table(1));
    for (const bytes of [0, ROW_SLOT_BYTES * 2, ROW_SLOT_BYTES * 64, 4 * 1024 * 1024]) {
      const cache = new RowCache(bytes);
      const out = new ByteWriter(16);
      for (const rows of requests(bytes)) expect(cached(renderer, rows, cache, out)).toBe(plain(renderer, rows));
    }
  });

  it('serves repeated rows from the cache: a hit copies the stored text', () => {
    const renderer = new RowRenderer(table(2));
    const cache = new RowCache(1024 * 1024);
    const rows = Int32Array.from([7, 8, 9]);
    cached(renderer, rows, cache);
    // Overwrite the stored text of row 8 with same-length bytes: a later render shows it,
    // which proves the second render came from the cache, not from the columns.
    const slots = [...cache.row.keys()].filter((s) => cache.row[s] === 8 && cache.owner[s]! >= 0);
    expect(slots.length).toBe(1);
    const at = slots[0]! * ROW_SLOT_BYTES;
    const text = Buffer.from(cache.text[slots[0]!]!).toString('latin1');
    const marked = text.replace('"label":"', '"label":"!').replace(/.(?=}$)/, '');
    expect(marked.length).toBe(text.length);
    cache.bytes.set(Buffer.from(marked, 'latin1'), at);
    expect(cached(renderer, rows, cache)).toContain('"label":"!');
  });

  it('never hands one table (or generation) the rows of another with the same row ids', () => {
    const a = new RowRenderer(table(3));
    const b = new RowRenderer(table(4)); // same shape, other values: a new generation looks like this
    for (const bytes of [0, ROW_SLOT_BYTES * 2, 4 * 1024 * 1024]) {
      const cache = new RowCache(bytes);
      // The same row id right after the other table wrote it (one slot: the very same slot).
      expect(cached(a, Int32Array.from([5]), cache)).toBe(plain(a, Int32Array.from([5])));
      expect(cached(b, Int32Array.from([5]), cache)).toBe(plain(b, Int32Array.from([5])));
      for (const rows of requests(5)) {
        expect(cached(a, rows, cache)).toBe(plain(a, rows));
        expect(cached(b, rows, cache)).toBe(plain(b, rows));
      }
    }
  });

  it('renders rows longer than a slot every time, correctly, without storing them', () => {
    const renderer = new RowRenderer(table(6, 5));
    const cache = new RowCache(1024 * 1024);
    for (const rows of requests(7)) expect(cached(renderer, rows, cache)).toBe(plain(renderer, rows));
    for (let s = 0; s < cache.slots; s++) if (cache.owner[s]! >= 0) expect(cache.row[s]! % 5).not.toBe(0);
  });

  it('is sized once within its bound, in whole power-of-two slots', () => {
    expect(new RowCache(0).slots).toBe(1);
    expect(new RowCache(ROW_SLOT_BYTES * 3).slots).toBe(2);
    const c = new RowCache(64 * 1024 * 1024);
    expect(c.slots * ROW_SLOT_BYTES).toBe(64 * 1024 * 1024);
    expect(c.bytes.byteLength).toBe(64 * 1024 * 1024);
  });
});
