/**
 * Plain Utf8 columns are coded by hashing each cell's bytes (store/utf8-coder.ts), with one
 * JS string per distinct value. Checked against the obvious reference on real Arrow files:
 * a string per row, numbered in order of first appearance through a Map. Codes and strings
 * must be identical, including for hash collisions, empty and null cells, non-ASCII text,
 * several record batches, and invalid UTF-8 (distinct bytes that decode to one string).
 */
import { Utf8, makeData, makeVector, tableFromIPC, type Data } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { buildTable } from '../src/store/build-table.js';
import { decodeArrowSnapshot } from '../src/store/decode-arrow.js';
import { Utf8Coder } from '../src/store/utf8-coder.js';
import { snapshotWithColumn } from './support/hand-built-snapshot.js';
import { Rng } from './support/random-snapshot.js';

/** Two ASCII strings with the same 32-bit FNV-1a hash (the coder's hash). */
const COLLIDING = ['k4uzx', 'kf2ad'] as const;

function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193);
  return h;
}

/** The decoding this replaced: a string per row, codes in order of first appearance. */
function referenceCodes(bytes: Uint8Array, column: string): { codes: number[]; strings: string[] } {
  const table = tableFromIPC(bytes);
  const codes: number[] = [];
  const strings: string[] = [];
  const codeOf = new Map<string, number>();
  for (const d of table.getChild(column)!.data as Data[]) {
    const offsets = d.valueOffsets as Int32Array;
    const values = d.values as Uint8Array;
    const buf = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    for (let i = 0; i < d.length; i++) {
      const s = buf.toString('utf8', offsets[i]!, offsets[i + 1]!);
      let c = codeOf.get(s);
      if (c === undefined) {
        c = strings.length;
        strings.push(s);
        codeOf.set(s, c);
      }
      codes.push(c);
    }
  }
  return { codes, strings };
}

/** A snapshot of `values.length` rows with a plain Utf8 column `label`, in batches of `batchRows`. */
function snapshotWithLabels(values: ReadonlyArray<string | null>, batchRows: number): Uint8Array {
  const n = values.length;
  const us = 1_775_001_600_000_000;
  return buildArrowSnapshot({
    seriesKey: [],
    batchRows,
    columns: [
      { name: 'date', type: 'date32', values: Array.from({ length: n }, (_, i) => 20_000 + i) },
      { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: Array.from({ length: n }, () => us) },
      { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: Array.from({ length: n }, () => us) },
      { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: Array.from({ length: n }, () => us) },
      { name: 'model_version', type: 'utf8', values: Array.from({ length: n }, () => '1.0') },
      { name: 'label', type: 'utf8', values },
    ],
  });
}

function expectSameAsReference(bytes: Uint8Array): void {
  const decoded = decodeArrowSnapshot(bytes);
  const label = decoded.columns.find((c) => c.name === 'label')!;
  if (label.kind !== 'string') throw new Error('label must decode as a string column');
  const ref = referenceCodes(bytes, 'label');
  expect(label.strings).toEqual(ref.strings);
  expect(Array.from(label.codes)).toEqual(ref.codes);
  // The table builder needs distinct strings for its dictionary.
  expect(() => buildTable(decoded, 0)).not.toThrow();
}

describe('Utf8Coder', () => {
  it('tells apart byte strings whose hashes collide, and finds each again', () => {
    const enc = COLLIDING.map((s) => new TextEncoder().encode(s));
    expect(fnv1a(enc[0]!)).toBe(fnv1a(enc[1]!));
    const coder = new Utf8Coder();
    expect(coder.code(enc[0]!, 0, enc[0]!.length)).toBe(0);
    expect(coder.code(enc[1]!, 0, enc[1]!.length)).toBe(1);
    expect(coder.code(enc[1]!, 0, enc[1]!.length)).toBe(1);
    expect(coder.code(enc[0]!, 0, enc[0]!.length)).toBe(0);
    expect(coder.finish()).toEqual({ strings: [...COLLIDING], remap: null });
  });

  it('codes slices of a larger buffer by their bytes, the empty slice included', () => {
    const text = new TextEncoder().encode('abcabcab');
    const coder = new Utf8Coder();
    expect([coder.code(text, 0, 3), coder.code(text, 3, 6), coder.code(text, 6, 6), coder.code(text, 6, 8), coder.code(text, 2, 2)]).toEqual([0, 0, 1, 2, 1]);
    expect(coder.finish().strings).toEqual(['abc', '', 'ab']);
  });
});

describe('decoding plain Utf8 columns by their bytes', () => {
  it('duplicates, empty strings, nulls, non-ASCII and colliding hashes, over several record batches', () => {
    const values = [
      'normal',
      'normal',
      '',
      null,
      'mild',
      'é',
      'e\u0301',
      '日本語',
      '\u{1F600}',
      '\uFFFD',
      COLLIDING[0],
      COLLIDING[1],
      '',
      null,
      'normal',
      COLLIDING[1],
      '\u{1F600}x',
      'mild',
    ];
    for (const batchRows of [1, 4, 7, values.length]) expectSameAsReference(snapshotWithLabels(values, batchRows));
  });

  it('many distinct values in random order (the table grows and probes)', () => {
    const rng = new Rng(20_261_122);
    const pool = Array.from({ length: 30_000 }, (_, i) => (i % 3 === 0 ? `v${i}` : i % 3 === 1 ? `ü${i.toString(36)}` : `${'x'.repeat(i % 17)}${i}`));
    const values = Array.from({ length: 80_000 }, () => (rng.chance(0.02) ? null : rng.pick(pool)));
    expectSameAsReference(snapshotWithLabels(values, 9_999));
  });

  it('invalid UTF-8: distinct byte sequences that decode to the same string share one code', () => {
    // Each cell is raw bytes: lone continuation bytes, a truncated sequence, an overlong
    // encoding and an encoded surrogate all decode to U+FFFD characters.
    const cells = [[0xff], [0x61], [0xfe], [0xc3], [0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xff], [], [0xc3, 0xa9], [0x61, 0xff], [0x61, 0xfe]].map((b) =>
      Uint8Array.from(b),
    );
    const offsets = new Int32Array(cells.length + 1);
    cells.forEach((c, i) => (offsets[i + 1] = offsets[i]! + c.length));
    const data = new Uint8Array(offsets[cells.length]!);
    cells.forEach((c, i) => data.set(c, offsets[i]!));
    const label = makeVector(makeData({ type: new Utf8(), length: cells.length, valueOffsets: offsets, data }));
    const bytes = snapshotWithColumn('label', label);
    const ref = referenceCodes(bytes, 'label');
    expect(new Set(ref.codes).size).toBeLessThan(cells.length);
    expectSameAsReference(bytes);
  });
});
