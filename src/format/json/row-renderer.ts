import type { Table } from '../../store/table.js';
import type { ByteWriter } from '../bytes/byte-writer.js';
import { compileCell, type CellWriter } from './cell-writers.js';
import { PAGE_MAX_ROWS } from '../arenas/page-arena.js';
import type { PageCache } from '../arenas/page-cache.js';
import type { RowCache } from '../arenas/row-cache.js';
import type { RowOwner } from '../arenas/row-owner.js';

/** Rows a run from a found page must have to be copied from it (shorter runs go row by row). */
const MIN_RUN = 4;

/** Writes one row object `{...}` at p (room reserved; dv views the same bytes as b); returns the next position. */
type RowWriter = (b: Uint8Array, dv: DataView, p: number, row: number) => number;

/**
 * Renders rows of one table (one generation) as a JSON array, without an object per row.
 * The columns are the table's stored columns to write, in order: all of them, or a
 * projection (`columns=`); the JSON writer keeps one renderer per (table, layout).
 *
 * Built once per table and layout: the row writer is generated as straight-line code for this schema.
 * Every key (`"date":`, `,"col":`) becomes constant byte stores, and each column's writer is
 * called from its own call site. A loop over an array of writers would make that one call
 * site megamorphic (never inlined) and would copy the keys byte by byte from memory; the
 * profile put those two at over half of the rendering time. The generated source holds only
 * numbers and parameter names, never text from the snapshot.
 */
export class RowRenderer {
  private readonly writeRow: RowWriter;
  /** Upper bound on one row's bytes, its separating comma included. */
  readonly maxRowBytes: number;
  private dvOf: Buffer | null = null;
  private dv: DataView = new DataView(new ArrayBuffer(0));

  /**
   * `owner` tags this renderer's rows in a RowCache (the same on every thread for the same
   * generation and columns); null: its rows are never cached.
   */
  constructor(
    table: Pick<Table, 'columns'>,
    readonly owner: RowOwner | null = null,
  ) {
    const writers: CellWriter[] = [];
    const body: string[] = [];
    let max = 3; // `,{` and `}`
    let pending: number[] = [0x7b]; // constant bytes not yet stored
    for (let c = 0; c < table.columns.length; c++) {
      const column = table.columns[c]!;
      const cell = compileCell(column);
      const key = Buffer.from(`${c === 0 ? '' : ','}${JSON.stringify(column.name)}:`, 'utf8');
      pending.push(...key);
      body.push(storeConstants(pending), `p = w${c}(b, p, row);`);
      pending = [];
      writers.push(cell.write);
      max += key.length + cell.maxBytes;
    }
    pending.push(0x7d);
    body.push(storeConstants(pending), 'return p;');
    const params = writers.map((_, c) => `w${c}`);
    const factory = new Function(...params, `'use strict'; return function writeRow(b, dv, p, row) {\n${body.join('\n')}\n};`) as (
      ...w: CellWriter[]
    ) => RowWriter;
    this.writeRow = factory(...writers);
    this.maxRowBytes = max;
  }

  /** A DataView of the output buffer, remade only when the writer has grown into a new one. */
  private viewOf(b: Buffer): DataView {
    if (this.dvOf !== b) {
      this.dvOf = b;
      this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    return this.dv;
  }

  /**
   * Room for n more bytes at p (the writer grows when short): the buffer to write into,
   * with this.dv viewing it.
   */
  private room(out: ByteWriter, p: number, n: number): Buffer {
    out.pos = p;
    out.ensure(n);
    this.viewOf(out.buf);
    return out.buf;
  }

  /** Writes `[row,row,...]` for the physical row ids rows[0..count), in that order. */
  writeRows(out: ByteWriter, rows: Int32Array, count: number): void {
    const writeRow = this.writeRow;
    const maxRowBytes = this.maxRowBytes;
    let p = out.pos;
    let b = this.room(out, p, maxRowBytes);
    let dv = this.dv;
    b[p++] = 0x5b;
    for (let i = 0; i < count; i++) {
      if (p + maxRowBytes > b.length) {
        b = this.room(out, p, maxRowBytes);
        dv = this.dv;
      }
      if (i > 0) b[p++] = 0x2c;
      p = writeRow(b, dv, p, rows[i]!);
    }
    out.pos = p;
    out.byte(0x5d);
  }

  /**
   * writeRows, reusing rows written before (by this renderer or by an equal one on another
   * thread) from `cache` and keeping the ones it renders: the same bytes either way. A page
   * of 2 to PAGE_MAX_ROWS rows first asks the cache's page arena for a page written before
   * that shares rows with it, and copies those in runs (page-cache.ts).
   */
  writeRowsCached(out: ByteWriter, rows: Int32Array, count: number, cache: RowCache): void {
    const owner = this.owner;
    if (owner === null) this.writeRows(out, rows, count);
    else if (cache.pages !== null && count > 1 && count <= PAGE_MAX_ROWS) this.writeRowsPaged(out, rows, count, cache, cache.pages);
    else this.writeRowsEach(out, rows, count, cache);
  }

  /**
   * writeRowsCached one row at a time, each from the row arena or rendered and kept there
   * (the renderer has an owner). Room for the next row and its comma is made after each row.
   */
  private writeRowsEach(out: ByteWriter, rows: Int32Array, count: number, cache: RowCache): void {
    const room = this.maxRowBytes + 1;
    let p = out.pos;
    let b = this.room(out, p, room + 1);
    b[p++] = 0x5b;
    for (let i = 0; i < count; i++) {
      if (i > 0) b[p++] = 0x2c;
      p = this.fromArena(b, this.dv, p, rows[i]!, cache);
      if (p + room > b.length) b = this.room(out, p, room);
    }
    out.pos = p;
    out.byte(0x5d);
  }

  /** One row at p (room reserved; dv views b) from the row arena, or written and kept there, under this renderer's owner; returns the end. */
  private fromArena(b: Buffer, dv: DataView, p: number, row: number, cache: RowCache): number {
    const owner = this.owner!;
    const copied = cache.copy(owner, row, dv, p);
    if (copied >= 0) return copied;
    const end = this.writeRow(b, dv, p, row);
    cache.keep(owner, row, dv, p, end);
    return end;
  }

  /**
   * writeRowsCached through the page arena: runs of rows a found page holds consecutively
   * are copied from it whole, the other rows go one at a time as in writeRowsEach. If a
   * writer came into the found page's slot meanwhile, the page is written again row by row.
   * The page is kept when it took less than 7/8 of its rows from a found one (a loop's
   * steps then refresh it every few steps, not on each).
   */
  private writeRowsPaged(out: ByteWriter, rows: Int32Array, count: number, cache: RowCache, pages: PageCache): void {
    const owner = this.owner!;
    const start = out.pos;
    const matched = pages.find(owner, rows, count);
    const match = pages.match;
    const written = pages.written;
    const maxRowBytes = this.maxRowBytes;
    let p = start;
    let b = this.room(out, p, maxRowBytes);
    let dv = this.dv;
    b[p++] = 0x5b;
    const text = p;
    let i = 0;
    let torn = false;
    while (i < count) {
      const j = matched > 0 ? match[i]! : -1;
      if (j >= 0) {
        let n = 1;
        while (i + n < count && match[i + n] === j + n) n++;
        if (n < MIN_RUN) {
          // Two native calls cost more than copying a row or two from the row arena.
          for (let k = 0; k < n; k++) match[i + k] = -1;
          continue;
        }
        const len = pages.runBytes(j, n);
        if (len < 0) {
          torn = true;
          break;
        }
        if (p + len + 9 > b.length) {
          b = this.room(out, p, len + 9);
          dv = this.dv;
        }
        if (i > 0) b[p++] = 0x2c;
        p = pages.copyRun(b, p, i, text);
        i += n;
        continue;
      }
      if (p + maxRowBytes > b.length) {
        b = this.room(out, p, maxRowBytes);
        dv = this.dv;
      }
      if (i > 0) b[p++] = 0x2c;
      p = this.fromArena(b, dv, p, rows[i]!, cache);
      written[i++] = p - text;
    }
    if (torn || (matched > 0 && !pages.stillValid())) {
      out.pos = start;
      this.writeRowsEach(out, rows, count, cache);
      return;
    }
    out.pos = p;
    out.byte(0x5d);
    if (matched < count - (count >> 3)) pages.keep(owner, rows, count, out.buf.subarray(text, p));
  }

  /**
   * One row object `{...}` at p of `b` (the caller reserved maxRowBytes there), from `cache`
   * when it holds the row, else written and kept; returns the end. For writers that put
   * computed fields around the stored ones (json-row-layout.ts).
   */
  writeRowAt(b: Buffer, p: number, row: number, cache: RowCache | null): number {
    const dv = this.viewOf(b);
    const owner = this.owner;
    if (cache === null || owner === null) return this.writeRow(b, dv, p, row);
    return this.fromArena(b, dv, p, row, cache);
  }
}

/**
 * Stores constant bytes at p and advances p: four at a time as little-endian words through
 * the DataView (unaligned stores are fine there), the rest one by one.
 */
function storeConstants(bytes: readonly number[]): string {
  if (bytes.length === 0) return '';
  const at = (i: number): string => (i === 0 ? 'p' : `p + ${i}`);
  const stores: string[] = [];
  let i = 0;
  for (; i + 4 <= bytes.length; i += 4) {
    const word = (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) >>> 0;
    stores.push(`dv.setUint32(${at(i)}, ${word}, true);`);
  }
  for (; i < bytes.length; i++) stores.push(`b[${at(i)}] = ${bytes[i]!};`);
  return `${stores.join(' ')} p += ${bytes.length};`;
}
