import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { allocateRowArena, ROW_SLOT_BYTES, TAG_LEN, TAG_REF, TAG_ROW, TAG_SEQ, TAG_WORDS } from '../src/format/arenas/row-arena.js';
import { RowCache } from '../src/format/arenas/row-cache.js';
import { ROW_FORMAT_CSV, ROW_FORMAT_JSON, ROW_LAYOUT_ALL, RowOwner } from '../src/format/arenas/row-owner.js';
import { RowOwners } from '../src/format/arenas/row-owners.js';
import { RowRenderer } from '../src/format/json/row-renderer.js';
import type { Column } from '../src/store/column.js';
import { rowRequests as requests, rowTable as table } from './support/row-tables.js';

/** A renderer of `columns` (stored columns of generation `gen`, whose table is `all`) tagged as every thread tags it. */
function rendererIn(cache: RowCache, gen: number, all: readonly Column[], columns: readonly Column[] = all): RowRenderer {
  cache.register(gen, all);
  const owner = cache.owners.ownerOf(columns, ROW_FORMAT_JSON);
  expect(owner).not.toBeNull();
  return new RowRenderer({ columns }, owner);
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

/** Slots holding a published row `row`. */
function slotsOf(cache: RowCache, row: number): number[] {
  const out: number[] = [];
  for (let s = 0; s < cache.slots; s++) if (cache.tags[s * TAG_WORDS + TAG_SEQ] !== 0 && cache.tags[s * TAG_WORDS + TAG_ROW] === row) out.push(s);
  return out;
}

describe('RowCache (rendered rows reused across requests and threads)', () => {
  it('writes exactly the bytes of an uncached render, at every cache size (1 slot to all rows)', () => {
    for (const bytes of [0, ROW_SLOT_BYTES * 2, ROW_SLOT_BYTES * 64, 4 * 1024 * 1024]) {
      const cache = RowCache.allocate(bytes);
      const renderer = rendererIn(cache, 1, table(1));
      const out = new ByteWriter(16);
      for (const rows of requests(bytes)) expect(cached(renderer, rows, cache, out)).toBe(plain(renderer, rows));
    }
  });

  it('serves repeated rows from the cache: a hit copies the stored text', () => {
    const cache = RowCache.allocate(1024 * 1024);
    const renderer = rendererIn(cache, 1, table(2));
    const rows = Int32Array.from([7, 8, 9]);
    cached(renderer, rows, cache);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 3 });
    // Overwrite the stored text of row 8 with same-length bytes: a later render shows it,
    // which proves the second render came from the cache, not from the columns.
    const slots = slotsOf(cache, 8);
    expect(slots.length).toBe(1);
    const at = slots[0]! * ROW_SLOT_BYTES;
    const len = cache.tags[slots[0]! * TAG_WORDS + TAG_LEN]!;
    const text = Buffer.from(cache.bytes.subarray(at, at + len)).toString('latin1');
    expect(Buffer.from(text, 'latin1').toString('utf8')).toBe(plain(renderer, Int32Array.from([8])).slice(1, -1));
    const marked = text.replace('"label":"', '"label":"!').replace(/.(?=}$)/, '');
    expect(marked.length).toBe(text.length);
    cache.bytes.set(Buffer.from(marked, 'latin1'), at);
    expect(cached(renderer, rows, cache)).toContain('"label":"!');
    expect(cache.stats()).toMatchObject({ hits: 3, misses: 3 });
  });

  it('shares text between two views of one arena (two threads): the same generation and columns hit, whoever wrote them', () => {
    const memory = allocateRowArena(1024 * 1024, 'first');
    const [a, b] = [new RowCache(memory), new RowCache(memory)];
    // Each thread has its own Column objects over the same data, registered under the loading thread's uid.
    const ra = rendererIn(a, 7, table(3));
    const rb = rendererIn(b, 7, table(3));
    const rows = Int32Array.from({ length: 40 }, (_, i) => 100 + i);
    const want = plain(ra, rows);
    expect(cached(ra, rows, a)).toBe(want);
    expect(cached(rb, rows, b)).toBe(want);
    expect(a.stats()).toMatchObject({ hits: 0, misses: 40 });
    expect(b.stats()).toMatchObject({ hits: 40, misses: 0 });
  });

  it('never hands one generation the rows of another with the same row ids', () => {
    for (const bytes of [0, ROW_SLOT_BYTES * 2, 4 * 1024 * 1024]) {
      const memory = allocateRowArena(bytes, 'first');
      // Two threads, two generations of one dataset: same shape, other values.
      const [ta, tb] = [new RowCache(memory), new RowCache(memory)];
      const a = rendererIn(ta, 1, table(3));
      const b = rendererIn(tb, 2, table(4));
      // The same row id right after the other generation wrote it (one slot: the very same slot).
      expect(cached(a, Int32Array.from([5]), ta)).toBe(plain(a, Int32Array.from([5])));
      expect(cached(b, Int32Array.from([5]), tb)).toBe(plain(b, Int32Array.from([5])));
      for (const rows of requests(5)) {
        expect(cached(a, rows, ta)).toBe(plain(a, rows));
        expect(cached(b, rows, tb)).toBe(plain(b, rows));
      }
    }
  });

  it('never hands one row the text of another row, nor a projection the full row', () => {
    const cache = RowCache.allocate(0); // one slot: every row lands in it
    const cols = table(5);
    const full = rendererIn(cache, 1, cols);
    const projected = rendererIn(cache, 1, cols, [cols[0]!, cols[2]!]);
    for (const row of [5, 6, 6, 5]) {
      const rows = Int32Array.from([row]);
      expect(cached(full, rows, cache)).toBe(plain(full, rows));
      expect(cached(projected, rows, cache)).toBe(plain(projected, rows));
    }
    expect(cache.stats().hits).toBe(0);
  });

  it('matches a slot only on every tag field: generation, layout bits, format and row', () => {
    const cache = RowCache.allocate(0);
    const src = Buffer.from('{"some":"row text of 31 bytes"}');
    const dv = (b: Buffer): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const owner = new RowOwner(3, 0x5, 0x1, ROW_FORMAT_JSON);
    cache.keep(owner, 42, dv(src), 0, src.length);
    const dst = Buffer.alloc(64);
    const others = [
      new RowOwner(4, 0x5, 0x1, ROW_FORMAT_JSON),
      new RowOwner(3, 0x7, 0x1, ROW_FORMAT_JSON),
      new RowOwner(3, 0x5, 0x0, ROW_FORMAT_JSON),
      new RowOwner(3, 0x5, 0x1, ROW_FORMAT_CSV),
    ];
    for (const other of others) expect(cache.copy(other, 42, dv(dst), 0)).toBe(-1);
    expect(cache.copy(owner, 43, dv(dst), 0)).toBe(-1);
    expect(cache.copy(owner, 42, dv(dst), 3)).toBe(3 + src.length);
    expect(dst.subarray(3, 3 + src.length).toString()).toBe(src.toString());
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 5, evictions: 0 });
  });

  it('misses a slot being written (odd version) and never writes into it', () => {
    const cache = RowCache.allocate(0);
    const owner = new RowOwner(1, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const dv = (b: Buffer): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const a = Buffer.from('{"a":1}');
    cache.keep(owner, 1, dv(a), 0, a.length);
    const seq = cache.tags[TAG_SEQ]!;
    expect(seq % 2).toBe(0);
    expect(seq).toBeGreaterThan(0);
    const dst = Buffer.alloc(16);
    Atomics.store(cache.tags, TAG_SEQ, seq + 1); // another thread claimed the slot
    expect(cache.copy(owner, 1, dv(dst), 0)).toBe(-1);
    const b = Buffer.from('{"b":22}');
    cache.keep(owner, 2, dv(b), 0, b.length); // loses the claim: keeps nothing
    expect(cache.tags[TAG_SEQ]).toBe(seq + 1);
    expect(cache.tags[TAG_ROW]).toBe(1);
    Atomics.store(cache.tags, TAG_SEQ, seq); // the other writer gave up
    expect(cache.copy(owner, 1, dv(dst), 0)).toBe(a.length);
    cache.keep(owner, 2, dv(b), 0, b.length);
    expect(cache.tags[TAG_SEQ]).toBe(seq + 2);
    expect(cache.copy(owner, 2, dv(dst), 0)).toBe(b.length);
    expect(dst.subarray(0, b.length).toString()).toBe('{"b":22}');
    expect(cache.stats().evictions).toBe(1);
  });

  it('keeps two walk-forward runs whose first slots coincide: the second one settles in its other slots', () => {
    // Two generations whose runs of 16 consecutive rows map onto the same 16 of 64 first
    // slots, with their second slots apart from those and from each other.
    const SLOTS = 64;
    const JSON_ALL = ROW_FORMAT_JSON | ROW_LAYOUT_ALL;
    const offset = (o: RowOwner): number => (((o.spread2 - o.spread) % SLOTS) + SLOTS) % SLOTS;
    const apart = (x: number, y: number): boolean => Math.min((x - y + SLOTS) % SLOTS, (y - x + SLOTS) % SLOTS) >= 16;
    let pair: [number, number] | null = null;
    for (let g = 1; g < 5000 && pair === null; g++)
      for (let h = 1; h < g && pair === null; h++) {
        const [og, oh] = [new RowOwner(g, 0, 0, JSON_ALL), new RowOwner(h, 0, 0, JSON_ALL)];
        if (((og.spread - oh.spread) & (SLOTS - 1)) === 0 && apart(offset(og), 0) && apart(offset(oh), 0) && apart(offset(og), offset(oh))) pair = [g, h];
      }
    expect(pair).not.toBeNull();
    const cache = RowCache.allocate(SLOTS * ROW_SLOT_BYTES);
    expect(cache.slots).toBe(SLOTS);
    const [a, b] = [rendererIn(cache, pair![0], table(11)), rendererIn(cache, pair![1], table(12))];
    expect(cache.slotOf(a.owner!, 100)).toBe(cache.slotOf(b.owner!, 100));
    const rows = Int32Array.from({ length: 16 }, (_, i) => 100 + i);
    for (let step = 0; step < 3; step++) {
      expect(cached(a, rows, cache)).toBe(plain(a, rows));
      expect(cached(b, rows, cache)).toBe(plain(b, rows));
    }
    // Both runs were rendered once; every later step copied them (one candidate: no hit ever).
    expect(cache.stats()).toMatchObject({ misses: 32, hits: 64, evictions: 0 });
  });

  it('copies a kept row to every alignment of the output and into a view at an odd offset, every length up to a slot, byte for byte', () => {
    const cache = RowCache.allocate(64 * ROW_SLOT_BYTES);
    const owner = new RowOwner(77, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const text = new Uint8Array(ROW_SLOT_BYTES);
    for (let i = 0; i < text.length; i++) text[i] = (i * 167 + 13) & 0xff;
    // a backing buffer whose view starts at byte 3: absolute alignment differs from p's
    const backing = new ArrayBuffer(4 * ROW_SLOT_BYTES + 64);
    const dst = new Uint8Array(backing, 3, 2 * ROW_SLOT_BYTES + 32);
    const dv = new DataView(backing, 3, dst.byteLength);
    const lengths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 63, 64, 65, 255, ROW_SLOT_BYTES - 1, ROW_SLOT_BYTES];
    for (const len of lengths) {
      const row = len;
      cache.keep(owner, row, new DataView(text.buffer), 0, len);
      for (let p = 0; p < 8; p++) {
        dst.fill(0xee);
        expect(cache.copy(owner, row, dv, p), `len ${len} at ${p}`).toBe(p + len);
        expect(Buffer.from(dst.subarray(p, p + len)).equals(Buffer.from(text.subarray(0, len))), `len ${len} at ${p}`).toBe(true);
        // nothing before p or after the row is touched
        expect(dst.subarray(0, p).every((b) => b === 0xee)).toBe(true);
        expect(
          dst.subarray(p + len).every((b) => b === 0xee),
          `len ${len} at ${p}: bytes after the row`,
        ).toBe(true);
      }
    }
  });

  it('never keeps text with eight bytes that read as a NaN (it is copied as doubles), and leaves the slot it half overwrote to no row', () => {
    const cache = RowCache.allocate(ROW_SLOT_BYTES);
    expect(cache.slots).toBe(1);
    const owner = new RowOwner(5, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const keep = (row: number, text: Uint8Array): void => cache.keep(owner, row, new DataView(text.buffer, text.byteOffset), 0, text.length);
    const copied = (row: number, len: number): string | null => {
      const dst = new Uint8Array(ROW_SLOT_BYTES);
      const end = cache.copy(owner, row, new DataView(dst.buffer), 0);
      return end < 0 ? null : Buffer.from(dst.subarray(0, end)).toString('latin1') + (end === len ? '' : '!length');
    };
    const clean = Buffer.from('{"date":"2025-01-01","value":1.5}', 'latin1');
    // Words 0x7FF0.., 0x7FFF.., 0xFFF8.. and 0xFFFF.. with a non-zero mantissa: all NaNs.
    for (const [b6, b7] of [
      [0xf0, 0x7f],
      [0xff, 0x7f],
      [0xf8, 0xff],
      [0xff, 0xff],
    ] as const) {
      keep(1, clean);
      expect(copied(1, clean.length)).toBe(clean.toString('latin1'));
      // the third word of the row (bytes 16-23) is the NaN, after two ordinary words
      const nan = Buffer.from(clean);
      nan[2] = 0x44; // its first words differ from row 1's
      nan[22] = b6;
      nan[23] = b7;
      keep(2, nan);
      expect(copied(2, nan.length), `0x${b7.toString(16)}${b6.toString(16)}`).toBeNull();
      // row 1's slot took the first two words of row 2: it must not be served as row 1 either
      expect(copied(1, clean.length), `0x${b7.toString(16)}${b6.toString(16)}`).toBeNull();
    }
    // 0x7F and 0xF0-0xFF elsewhere in a word are ordinary text: kept and copied back as is
    const odd = Buffer.from(clean);
    odd[7] = 0x7f;
    odd[8] = 0xf0;
    odd[14] = 0x7f;
    odd[15] = 0xef;
    keep(3, odd);
    expect(copied(3, odd.length)).toBe(odd.toString('latin1'));
  });

  it('renders rows longer than a slot every time, correctly, without storing them', () => {
    const cache = RowCache.allocate(1024 * 1024);
    const renderer = rendererIn(cache, 1, table(6, 5));
    for (const rows of requests(7)) expect(cached(renderer, rows, cache)).toBe(plain(renderer, rows));
    let kept = 0;
    for (let s = 0; s < cache.slots; s++) {
      if (cache.tags[s * TAG_WORDS + TAG_SEQ] === 0) continue;
      kept++;
      expect(cache.tags[s * TAG_WORDS + TAG_ROW]! % 5).not.toBe(0);
    }
    expect(kept).toBeGreaterThan(100);
  });

  it('renders rows without an owner (an untagged layout) every time, touching no slot', () => {
    const cache = RowCache.allocate(1024 * 1024);
    const renderer = new RowRenderer({ columns: table(8) }, null);
    for (const rows of requests(9)) expect(cached(renderer, rows, cache)).toBe(plain(renderer, rows));
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 0 });
    expect(cache.tags.every((w) => w === 0)).toBe(true);
  });

  it('takes a torn length (out of range, or past the output) for a miss and writes nothing', () => {
    const cache = RowCache.allocate(4 * ROW_SLOT_BYTES);
    const owner = new RowOwner(3, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const text = Buffer.from('{"row":9,"v":1.5}');
    cache.keep(owner, 9, new DataView(text.buffer, text.byteOffset, text.length), 0, text.length);
    const s = slotsOf(cache, 9)[0]! * TAG_WORDS;
    const dst = Buffer.alloc(2 * ROW_SLOT_BYTES);
    const dv = new DataView(dst.buffer, dst.byteOffset, dst.length);
    // Exactly the room it needs: a hit.
    const fit = Buffer.alloc(4 + text.length);
    expect(cache.copy(owner, 9, new DataView(fit.buffer, fit.byteOffset, fit.length), 4)).toBe(fit.length);
    expect(fit.subarray(4).equals(text)).toBe(true);
    // One byte short: a miss, before anything is copied.
    const short = Buffer.alloc(3 + text.length, 0xee);
    expect(cache.copy(owner, 9, new DataView(short.buffer, short.byteOffset, short.length), 4)).toBe(-1);
    expect(short.every((b) => b === 0xee)).toBe(true);
    // Lengths a racing writer could leave (the version re-read would catch them after the copy; they must not be copied at all).
    for (const len of [-1, -8, ROW_SLOT_BYTES + 1, ROW_SLOT_BYTES + 8]) {
      cache.tags[s + TAG_LEN] = len;
      dst.fill(0xee);
      expect(cache.copy(owner, 9, dv, 4), `length ${len}`).toBe(-1);
      expect(dst.every((b) => b === 0xee)).toBe(true);
    }
    cache.tags[s + TAG_LEN] = text.length;
    expect(cache.copy(owner, 9, dv, 4)).toBe(4 + text.length);
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 5 });
  });

  it('marks a copied row in its own slot only: the row of the slot beside it is untouched', () => {
    const cache = RowCache.allocate(64 * ROW_SLOT_BYTES);
    const owner = new RowOwner(9, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const texts = ['', '{"row":1}', '{"row":2,"x":2}'];
    for (let row = 1; row <= 2; row++) {
      const t = Buffer.from(texts[row]!);
      cache.keep(owner, row, new DataView(t.buffer, t.byteOffset, t.length), 0, t.length);
    }
    const [s0, s1] = [cache.slotOf(owner, 1), cache.slotOf(owner, 2)];
    expect(s1).toBe((s0 + 1) & cache.mask);
    // Unmarked (as after a contest): the next copy marks them again.
    cache.tags[s0 * TAG_WORDS + TAG_REF] = 0;
    cache.tags[s1 * TAG_WORDS + TAG_REF] = 0;
    const dst = Buffer.alloc(64);
    const dv = new DataView(dst.buffer);
    for (const row of [2, 1, 2, 1]) {
      const end = cache.copy(owner, row, dv, 0);
      expect(dst.toString('latin1', 0, end)).toBe(texts[row]);
    }
    expect(cache.tags[s0 * TAG_WORDS + TAG_REF]).toBe(1);
    expect(cache.tags[s1 * TAG_WORDS + TAG_REF]).toBe(1);
    expect([cache.tags[s0 * TAG_WORDS + TAG_ROW], cache.tags[s1 * TAG_WORDS + TAG_ROW]]).toEqual([1, 2]);
  });

  it('puts a kept row in its first slot when free, else in its second; keeping it again rewrites the slot that holds it, evicting nothing', () => {
    const cache = RowCache.allocate(64 * ROW_SLOT_BYTES);
    const owner = new RowOwner(4, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const S = cache.slots;
    const keep = (row: number): void => {
      const t = Buffer.from(`{"row":${row}}`);
      cache.keep(owner, row, new DataView(t.buffer, t.byteOffset, t.length), 0, t.length);
    };
    const [a, b] = [cache.slotOf(owner, 5), cache.otherSlotOf(owner, 5)];
    expect(a).not.toBe(b);
    // Rows 5, 5 + S and 5 + 2S share both candidate slots.
    expect([cache.slotOf(owner, 5 + S), cache.otherSlotOf(owner, 5 + S)]).toEqual([a, b]);
    keep(5);
    expect(slotsOf(cache, 5)).toEqual([a]);
    // Even when the first slot's row is unmarked, a free second slot is taken before it.
    cache.tags[a * TAG_WORDS + TAG_REF] = 0;
    keep(5 + S);
    expect(slotsOf(cache, 5 + S)).toEqual([b]);
    expect(slotsOf(cache, 5)).toEqual([a]);
    keep(5);
    keep(5 + S);
    expect(slotsOf(cache, 5)).toEqual([a]);
    expect(slotsOf(cache, 5 + S)).toEqual([b]);
    expect(cache.stats().evictions).toBe(0);
  });

  it('gives a new row the slot whose row was not copied since the last contest, else the second one, after which both must be copied again to stay', () => {
    const cache = RowCache.allocate(64 * ROW_SLOT_BYTES);
    const owner = new RowOwner(6, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
    const S = cache.slots;
    const [x, y, z] = [5, 5 + S, 5 + 2 * S];
    const keep = (row: number): void => {
      const t = Buffer.from(`{"row":${row}}`);
      cache.keep(owner, row, new DataView(t.buffer, t.byteOffset, t.length), 0, t.length);
    };
    const dst = Buffer.alloc(64);
    const dv = new DataView(dst.buffer);
    const held = (row: number): boolean => cache.copy(owner, row, dv, 0) >= 0;
    const [a, b] = [cache.slotOf(owner, x), cache.otherSlotOf(owner, x)];
    keep(x); // a
    keep(y); // b
    // Both were kept since the last contest: the second slot goes, and both lose their mark.
    keep(z);
    expect(slotsOf(cache, z)).toEqual([b]);
    expect(cache.tags[a * TAG_WORDS + TAG_REF]).toBe(0);
    expect(cache.stats().evictions).toBe(1);
    // z kept again while x is unmarked: it rewrites its own slot (b), it does not take x's.
    keep(z);
    expect(slotsOf(cache, z)).toEqual([b]);
    expect(held(x)).toBe(true);
    expect(cache.stats().evictions).toBe(1);
    // x is copied (marked again); z was just kept (marked): the next contest again takes b.
    expect(cache.tags[a * TAG_WORDS + TAG_REF]).toBe(1);
    keep(y);
    expect(slotsOf(cache, y)).toEqual([b]);
    expect(held(z)).toBe(false);
    expect(cache.tags[a * TAG_WORDS + TAG_REF]).toBe(0);
    // After that contest x is not marked and y is (just kept): x's slot goes, y stays.
    keep(z);
    expect(slotsOf(cache, z)).toEqual([a]);
    expect(held(x)).toBe(false);
    expect(held(y)).toBe(true);
    // z (just kept) is marked; y's mark is cleared by hand (as a contest would): y's slot goes.
    cache.tags[b * TAG_WORDS + TAG_REF] = 0;
    keep(x);
    expect(slotsOf(cache, x)).toEqual([b]);
    expect(cache.tags[a * TAG_WORDS + TAG_REF]).toBe(1); // no contest: z keeps its mark
    expect(held(y)).toBe(false);
    expect(held(z)).toBe(true);
    expect(cache.stats().evictions).toBe(4);
  });

  it('tells a slot holding the same row of another owner from its own on every tag field when keeping (no overwrite, no missed eviction)', () => {
    const JSON_ALL = ROW_FORMAT_JSON | ROW_LAYOUT_ALL;
    const base = new RowOwner(8, 1, 2, JSON_ALL);
    const S = 64;
    // For each field, an owner that differs from `base` in it alone and whose row 5 has the same first slot.
    const variants: Array<[string, (k: number) => RowOwner]> = [
      ['generation', (k) => new RowOwner(100 + k, 1, 2, JSON_ALL)],
      ['layout low bits', (k) => new RowOwner(8, 100 + k, 2, JSON_ALL)],
      ['layout high bits', (k) => new RowOwner(8, 1, 100 + k, JSON_ALL)],
      ['format', (k) => new RowOwner(8, 1, 2, (100 + k) << 9)],
    ];
    for (const [field, make] of variants) {
      let other: RowOwner | null = null;
      for (let k = 0; k < 100_000 && other === null; k++) {
        const o = make(k);
        if (((o.spread - base.spread) & (S - 1)) === 0 && ((o.spread2 - base.spread2) & (S - 1)) !== 0) other = o;
      }
      expect(other, field).not.toBeNull();
      const cache = RowCache.allocate(S * ROW_SLOT_BYTES);
      const keep = (owner: RowOwner, text: string): void => {
        const t = Buffer.from(text);
        cache.keep(owner, 5, new DataView(t.buffer, t.byteOffset, t.length), 0, t.length);
      };
      const dst = Buffer.alloc(64);
      const dv = new DataView(dst.buffer);
      const copied = (owner: RowOwner): string | null => {
        const end = cache.copy(owner, 5, dv, 0);
        return end < 0 ? null : dst.toString('latin1', 0, end);
      };
      keep(base, '{"base":5}');
      keep(other!, '{"other":5}');
      // The other owner's row 5 went to its second slot: base's row 5 is still there.
      expect(copied(base), field).toBe('{"base":5}');
      expect(copied(other!), field).toBe('{"other":5}');
      expect(cache.stats().evictions, field).toBe(0);
      // Its own row kept again rewrites its own slot (no second copy of it) and evicts nothing.
      keep(base, '{"base":5}');
      expect(cache.stats().evictions, field).toBe(0);
      expect(slotsOf(cache, 5).length, field).toBe(2);
      expect(copied(other!), field).toBe('{"other":5}');
    }
  });

  it('is sized once within its bound, in whole power-of-two slots', () => {
    expect(RowCache.allocate(0).slots).toBe(1);
    expect(RowCache.allocate(ROW_SLOT_BYTES * 3).slots).toBe(2);
    const c = RowCache.allocate(64 * 1024 * 1024);
    expect(c.slots * ROW_SLOT_BYTES).toBe(64 * 1024 * 1024);
    expect(c.bytes.byteLength).toBe(64 * 1024 * 1024);
    expect(c.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(c.tags.buffer).toBeInstanceOf(SharedArrayBuffer);
  });
});

describe('RowOwners (tags every thread derives alike)', () => {
  it('tags a whole table by generation and format, a projection by its column bits', () => {
    const owners = new RowOwners();
    const cols = table(1);
    owners.register(9, cols);
    expect(owners.ownerOf(cols, ROW_FORMAT_JSON)).toMatchObject({ gen: 9, layoutLo: 0, layoutHi: 0, kind: ROW_FORMAT_JSON | ROW_LAYOUT_ALL });
    expect(owners.ownerOf(cols, ROW_FORMAT_CSV)).toMatchObject({ gen: 9, kind: ROW_FORMAT_CSV | ROW_LAYOUT_ALL });
    expect(owners.ownerOf([cols[1]!, cols[3]!], ROW_FORMAT_JSON)).toMatchObject({ gen: 9, layoutLo: 0b1010, layoutHi: 0, kind: ROW_FORMAT_JSON });
  });

  it('gives two threads (own Column objects, same uid) equal owners, and other generations other ones', () => {
    const [a, b] = [new RowOwners(), new RowOwners()];
    const [ca, cb] = [table(1), table(1)];
    a.register(4, ca);
    b.register(4, cb);
    const oa = a.ownerOf([ca[0]!, ca[2]!], ROW_FORMAT_JSON)!;
    const ob = b.ownerOf([cb[0]!, cb[2]!], ROW_FORMAT_JSON)!;
    expect({ ...ob }).toEqual({ ...oa });
    const next = table(1);
    a.register(5, next);
    expect(a.ownerOf([next[0]!, next[2]!], ROW_FORMAT_JSON)!.gen).toBe(5);
  });

  it('refuses what it cannot tag exactly: unknown columns, two tables, out of schema order, a projection past 64 columns', () => {
    const owners = new RowOwners();
    const [x, y] = [table(1), table(2)];
    owners.register(1, x);
    owners.register(2, y);
    expect(owners.ownerOf(table(3), ROW_FORMAT_JSON)).toBeNull();
    expect(owners.ownerOf([x[0]!, y[1]!], ROW_FORMAT_JSON)).toBeNull();
    expect(owners.ownerOf([x[2]!, x[1]!], ROW_FORMAT_JSON)).toBeNull();
    expect(owners.ownerOf([], ROW_FORMAT_JSON)).toBeNull();
    const wide: Column[] = Array.from({ length: 70 }, (_, i) => ({ ...x[2]!, name: `c${i}` }));
    owners.register(3, wide);
    expect(owners.ownerOf(wide, ROW_FORMAT_JSON)).toMatchObject({ gen: 3, kind: ROW_FORMAT_JSON | ROW_LAYOUT_ALL });
    expect(owners.ownerOf(wide.slice(0, 69), ROW_FORMAT_JSON)).toBeNull();
    const high = owners.ownerOf(
      [...wide.slice(0, 64)].filter((_, i) => i === 0 || i === 33 || i === 63),
      ROW_FORMAT_JSON,
    );
    expect(high).toBeNull(); // a projection of a 70-column table, even within the first 64
    const w60: Column[] = Array.from({ length: 60 }, (_, i) => ({ ...x[2]!, name: `d${i}` }));
    owners.register(4, w60);
    expect(owners.ownerOf([w60[0]!, w60[33]!, w60[59]!], ROW_FORMAT_JSON)).toMatchObject({
      layoutLo: 1,
      layoutHi: (1 << 1) | (1 << 27),
      kind: ROW_FORMAT_JSON,
    });
  });
});
