import type { Column, StringColumn } from '../store/column.js';
import { ByteInterner, internedColumn } from './byte-interner.js';
import { badAt, badEvents, checkEventNames, MAX_EVENTS, missingCell, tooManyEvents, type EventBatch, type EventSchema } from './event-batch.js';
import { parseAtBytes } from './event-time.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const decoder = new TextDecoder();
/** rows between two looks at whether the join is still wanted (a power of two) */
const CHECK_ROWS = 65_536;
const noCheck = (): void => {};

/**
 * Events from a CSV body (RFC 4180, a header row; lines end in LF or CRLF). Cells are read
 * where they lie in the body: `at` parsed in place, every other cell interned as bytes
 * (byte-interner.ts), so a passthrough cell comes back as the text given. An empty
 * unquoted cell is null (a missing `at` or key); `""` is the empty string.
 */
export function csvEvents(body: Uint8Array, schema: EventSchema, check: () => void = noCheck): EventBatch {
  const reader = new CsvCells(body);
  const names: string[] = [];
  if (!reader.nextCell()) throw badEvents('the CSV body is empty: a header row naming "at" and the series-key columns comes first');
  for (;;) {
    names.push(decoder.decode(reader.cell()));
    if (reader.endOfRow) break;
    reader.nextCell();
  }
  checkEventNames(names, schema);
  const width = names.length;
  const atIndex = names.indexOf('at');
  const interners = names.map(() => new ByteInterner());
  let cap = Math.min(MAX_EVENTS, Math.max(16, (body.length / (width * 4)) | 0));
  let atUs: Float64Array = new Float64Array(cap);
  let codes: Int32Array[] = names.map(() => new Int32Array(cap));
  let valid: Uint8Array[] = names.map(() => new Uint8Array(cap));
  const isKey = names.map((n) => schema.seriesKey.includes(n));
  let row = 0;
  while (reader.nextCell()) {
    // A last line break followed by nothing ends the body; an empty line elsewhere is a row with empty cells.
    if (reader.endOfRow && reader.empty && !reader.quoted && reader.atEnd) break;
    if (row === MAX_EVENTS) throw tooManyEvents();
    // A long parse looks, every CHECK_ROWS rows, whether it is still wanted.
    if ((row & (CHECK_ROWS - 1)) === CHECK_ROWS - 1) check();
    if (row === cap) {
      cap = Math.min(MAX_EVENTS, cap * 2);
      atUs = grownF64(atUs, cap);
      codes = codes.map((c) => grownI32(c, cap));
      valid = valid.map((v) => grownU8(v, cap));
    }
    for (let c = 0; c < width; c++) {
      if (c > 0) {
        if (reader.endOfRow) throw badEvents(`row ${row}: ${c} cells where the header names ${width}`);
        reader.nextCell();
      }
      const nullCell = reader.empty && !reader.quoted;
      if (c === atIndex) {
        if (nullCell) throw missingCell(row, 'at');
        const t = reader.quoted ? parseAtBytes(reader.cell(), 0, reader.cell().length) : parseAtBytes(body, reader.start, reader.end);
        if (Number.isNaN(t)) throw badAt(row, decoder.decode(reader.cell()));
        atUs[row] = t;
        continue;
      }
      if (nullCell) {
        if (isKey[c]) throw missingCell(row, names[c]!);
        continue;
      }
      valid[c]![row] = 1;
      codes[c]![row] = reader.quoted ? internAll(interners[c]!, reader.cell()) : interners[c]!.intern(body, reader.start, reader.end);
    }
    if (!reader.endOfRow) throw badEvents(`row ${row}: more cells than the header names (${width})`);
    row++;
  }
  const columns: Column[] = [];
  const keys = new Map<string, StringColumn>();
  const at = atUs.subarray(0, row);
  for (let c = 0; c < width; c++) {
    if (c === atIndex) {
      columns.push({ kind: 'timestamp', name: 'at', unit: 'us', values: at, validity: null });
      continue;
    }
    const v = valid[c]!.subarray(0, row);
    const col = internedColumn(names[c]!, interners[c]!, codes[c]!.subarray(0, row), allValid(v) ? null : v);
    columns.push(col);
    if (isKey[c]) keys.set(names[c]!, col);
  }
  return { count: row, atUs: at, columns, keys: schema.seriesKey.map((k) => keys.get(k)!) };
}

function internAll(interner: ByteInterner, b: Uint8Array): number {
  return interner.intern(b, 0, b.length);
}

function allValid(v: Uint8Array): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] === 0) return false;
  return true;
}

/**
 * The cells of a CSV body, one at a time: [start, end) in the body for a plain cell, or the
 * unescaped bytes of a quoted one (its doubled quotes undone) in a scratch buffer.
 */
class CsvCells {
  start = 0;
  end = 0;
  quoted = false;
  /** the cell just read ended its row (or the body) */
  endOfRow = true;
  private pos = 0;
  private scratch = new Uint8Array(256);
  private scratchLen = 0;

  constructor(private readonly b: Uint8Array) {}

  get empty(): boolean {
    return this.quoted ? this.scratchLen === 0 : this.end === this.start;
  }

  get atEnd(): boolean {
    return this.pos >= this.b.length;
  }

  /** The bytes of the cell just read (a view, valid until the next cell). */
  cell(): Uint8Array {
    return this.quoted ? this.scratch.subarray(0, this.scratchLen) : this.b.subarray(this.start, this.end);
  }

  /** Reads the next cell; false at the end of the body. */
  nextCell(): boolean {
    const b = this.b;
    const n = b.length;
    if (this.pos >= n && this.endOfRow) return false;
    let p = this.pos;
    if (p < n && b[p] === QUOTE) {
      this.quoted = true;
      this.scratchLen = 0;
      p++;
      for (;;) {
        if (p >= n) throw badEvents('a quoted CSV cell is not closed before the end of the body');
        const c = b[p]!;
        if (c === QUOTE) {
          if (b[p + 1] === QUOTE) {
            this.push(QUOTE);
            p += 2;
            continue;
          }
          p++;
          break;
        }
        this.push(c);
        p++;
      }
      if (p < n && b[p] !== COMMA && b[p] !== LF && b[p] !== CR) throw badEvents('a quoted CSV cell is followed by more than a comma or a line break');
    } else {
      this.quoted = false;
      this.start = p;
      while (p < n) {
        const c = b[p]!;
        if (c === COMMA || c === LF || c === CR) break;
        if (c === QUOTE) throw badEvents('a quote inside an unquoted CSV cell (quote the whole cell and double its quotes)');
        p++;
      }
      this.end = p;
    }
    if (p >= n) {
      this.endOfRow = true;
    } else if (b[p] === COMMA) {
      this.endOfRow = false;
      p++;
    } else {
      this.endOfRow = true;
      p += b[p] === CR && b[p + 1] === LF ? 2 : 1;
    }
    this.pos = p;
    return true;
  }

  private push(c: number): void {
    if (this.scratchLen === this.scratch.length) {
      const next = new Uint8Array(this.scratch.length * 2);
      next.set(this.scratch);
      this.scratch = next;
    }
    this.scratch[this.scratchLen++] = c;
  }
}

function grownF64(a: Float64Array, n: number): Float64Array {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}
function grownI32(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}
function grownU8(a: Uint8Array, n: number): Uint8Array {
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}
