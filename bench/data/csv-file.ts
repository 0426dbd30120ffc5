/**
 * The CSV side file of a dataset (format in BenchDataset.csvPath). Written as bytes into a
 * reused buffer: tens of millions of rows as JS strings spend most of their time in the GC.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BenchBatch, BenchColumnType } from '../alternatives/types.js';
import { formatDate, US_PER_DAY } from '../../src/time/instant.js';
import { readBatches } from './read-back.js';

const CHUNK = 8 * 1024 * 1024;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

class Out {
  buf = Buffer.allocUnsafe(CHUNK);
  pos = 0;
  private readonly days = new Map<number, Buffer>();
  private readonly strings = new Map<string, Buffer>();

  bytes(b: Buffer): void {
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  ascii(s: string): void {
    this.pos += this.buf.write(s, this.pos, 'latin1');
  }

  text(s: string): void {
    let b = this.strings.get(s);
    if (b === undefined) {
      b = Buffer.from(s, 'utf8');
      if (this.strings.size < 100_000) this.strings.set(s, b);
    }
    this.bytes(b);
  }

  day(d: number): void {
    let b = this.days.get(d);
    if (b === undefined) this.days.set(d, (b = Buffer.from(formatDate(d), 'latin1')));
    this.bytes(b);
  }

  /** fixed-width decimal digits */
  digits(v: number, width: number): void {
    for (let i = width - 1; i >= 0; i--) {
      this.buf[this.pos + i] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    }
    this.pos += width;
  }

  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` */
  timestamp(us: number): void {
    const day = Math.floor(us / US_PER_DAY);
    this.day(day);
    let rest = us - day * US_PER_DAY;
    const micros = rest % 1_000_000;
    rest = (rest - micros) / 1_000_000;
    const b = this.buf;
    b[this.pos++] = 0x54; // T
    this.digits(Math.floor(rest / 3600), 2);
    b[this.pos++] = 0x3a;
    this.digits(Math.floor(rest / 60) % 60, 2);
    b[this.pos++] = 0x3a;
    this.digits(rest % 60, 2);
    b[this.pos++] = 0x2e;
    this.digits(micros, 6);
    b[this.pos++] = 0x5a; // Z
  }
}

/** Writes the CSV once (atomically, beside nothing else) and returns its path. */
export async function ensureCsv(arrowPath: string, csvPath: string): Promise<string> {
  try {
    await stat(csvPath);
    return csvPath;
  } catch {
    // not written yet
  }
  await mkdir(dirname(csvPath), { recursive: true });
  const file = createWriteStream(`${csvPath}.tmp`);
  const out = new Out();
  const flush = async (): Promise<void> => {
    // The stream keeps the buffer until written: hand over a copy of the used part.
    const ok = file.write(Buffer.from(out.buf.subarray(0, out.pos)));
    out.pos = 0;
    if (!ok) await new Promise<void>((r) => file.once('drain', () => r()));
  };
  let header = false;
  for await (const b of readBatches(arrowPath)) {
    if (!header) {
      out.text(b.columnTypes.map((c) => c.name).join(',') + '\n');
      header = true;
    }
    const types = b.columnTypes.map((c) => c.type);
    // A row is far below 4 KiB (strings are short keys and labels).
    for (let r = 0; r < b.length; r++) {
      if (out.pos > CHUNK - 4096) await flush();
      for (let c = 0; c < types.length; c++) {
        if (c > 0) out.buf[out.pos++] = COMMA;
        cell(out, b.columns[c]!, types[c]!, r);
      }
      out.buf[out.pos++] = NEWLINE;
    }
  }
  await flush();
  await new Promise<void>((done, fail) => file.end((e?: Error | null) => (e ? fail(e) : done())));
  await rename(`${csvPath}.tmp`, csvPath);
  return csvPath;
}

function cell(out: Out, col: BenchBatch['columns'][number], type: BenchColumnType, r: number): void {
  switch (type) {
    case 'date32':
      out.day((col as Int32Array)[r]!);
      return;
    case 'timestamp':
      out.timestamp((col as Float64Array)[r]!);
      return;
    case 'utf8': {
      const v = (col as readonly (string | null)[])[r];
      if (v !== null && v !== undefined) out.text(v);
      return;
    }
    case 'bool': {
      const v = (col as Uint8Array)[r]!;
      if (v !== 2) out.bytes(v === 1 ? TRUE : FALSE);
      return;
    }
    default: {
      const v = (col as Float64Array)[r]!;
      if (!Number.isNaN(v)) out.ascii(String(v));
    }
  }
}
