/**
 * A loaded generation keeps each string column's codes in the narrowest array its distinct
 * values allow (docs/snapshots.md#memory), and a generation of many parts widens a column
 * when a later part brings more values than its width holds (Uint8 -> Uint16 -> Int32), the
 * rows already placed kept. Every row must still read back its own value, as the same rows
 * built from one object and as the rows that went in. A key's date is Int16 while every
 * date fits (1880 to 2059) and its series Uint16 up to 65,536 series, else both Int32.
 */
import { describe, expect, it } from 'vitest';
import { buildArrowSnapshot, type SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { sha256Hex, snapshotToTable } from '../src/store/snapshot-to-table.js';
import type { StringColumn } from '../src/store/column.js';
import type { Table } from '../src/store/table.js';

const DAY0 = 20_000;
const US = 1_780_000_000_000_000;

/** Series s (zone `z{s}` padded, so the series order is s's) on day d, one row each; label and tag from (s, d). */
function rows(series: readonly number[], days: number, labelOf: (s: number, d: number) => string, day0 = DAY0): SnapshotSpec {
  const zone: string[] = [];
  const date: number[] = [];
  const label: string[] = [];
  const tag: (string | null)[] = [];
  for (const s of series) {
    for (let d = 0; d < days; d++) {
      zone.push(`z${String(s).padStart(6, '0')}`);
      date.push(day0 + d);
      label.push(labelOf(s, d));
      tag.push((s + d) % 5 === 0 ? null : ['low', 'mid', 'high'][(s + d) % 3]!);
    }
  }
  const t = date.map((d, i) => US + d * 1e6 + i);
  return {
    seriesKey: ['zone'],
    columns: [
      { name: 'date', type: 'date32', values: date },
      { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: t },
      { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: t },
      { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: t },
      { name: 'model_version', type: 'utf8', values: date.map(() => 'v1') },
      { name: 'zone', type: 'dict-utf8', values: zone },
      { name: 'label', type: 'utf8', values: label },
      { name: 'tag', type: 'utf8', values: tag },
    ],
  };
}

function build(parts: readonly SnapshotSpec[]): Table {
  const bytes = parts.map((p) => buildArrowSnapshot(p));
  const want = bytes.map((b, i) => ({ object: `part-${i}`, sha256: sha256Hex(b), rows: parts[i]!.columns[0]!.values.length }));
  return snapshotToTable(bytes, { parts: want, filterColumns: [], floorUs: 0 });
}

function merged(parts: readonly SnapshotSpec[]): SnapshotSpec {
  return {
    ...parts[0]!,
    columns: parts[0]!.columns.map((c, i) => ({ ...c, values: parts.flatMap((q) => Array.from(q.columns[i]!.values as ArrayLike<unknown>)) }) as never),
  };
}

const col = (t: Table, name: string): StringColumn => t.columns.find((c) => c.name === name) as StringColumn;
const valueAt = (c: StringColumn, r: number): string | null => (c.validity !== null && c.validity[r] === 0 ? null : c.dict.values[c.codes[r]!]!);

describe('string codes as narrow as their dictionary', () => {
  it('parts that bring 200, then 300, then 70,000 distinct values widen the column from Uint8 to Uint16 to Int32, every row kept', () => {
    const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);
    // zone: 200 series, then 100 more, then 65,300 more; label: distinct per (series, day) in the last part.
    const parts = [rows(range(0, 200), 2, (s) => `a${s % 150}`), rows(range(200, 300), 2, (s, d) => `b${s}-${d}`), rows(range(300, 65_600), 1, (s) => `c${s}`)];
    const widths = [1, 2, 4];
    const after: Table[] = [];
    for (let k = 1; k <= parts.length; k++) after.push(build(parts.slice(0, k)));
    after.forEach((t, k) => {
      expect(col(t, 'zone').codes.BYTES_PER_ELEMENT, `zone after ${k + 1} parts`).toBe(widths[k]);
      expect(col(t, 'model_version').codes.BYTES_PER_ELEMENT).toBe(1);
      expect(col(t, 'tag').codes.BYTES_PER_ELEMENT).toBe(1);
    });
    expect(col(after[0]!, 'label').codes.BYTES_PER_ELEMENT).toBe(1);
    expect(col(after[1]!, 'label').codes.BYTES_PER_ELEMENT).toBe(2);
    expect(col(after[2]!, 'label').codes.BYTES_PER_ELEMENT).toBe(4);

    // 200 and 300 series: Uint16 series ids; 65,600: Int32. Dates of 2024: Int16.
    expect(after.map((t) => t.keySeries.BYTES_PER_ELEMENT)).toEqual([2, 2, 4]);
    expect(after.map((t) => t.keyDate.BYTES_PER_ELEMENT)).toEqual([2, 2, 2]);
    const parted = after[2]!;
    for (const t of after) {
      const date = (t.columns.find((c) => c.name === 'date') as { values: Int32Array }).values;
      for (let s = 0; s < t.seriesCount; s++) {
        for (let k = t.seriesKeyStart[s]!; k < t.seriesKeyStart[s + 1]!; k++) {
          if (t.keySeries[k] !== s || t.keyDate[k] !== date[t.keyRowStart[k]!]) expect([t.keySeries[k], t.keyDate[k]]).toEqual([s, date[t.keyRowStart[k]!]]);
        }
      }
    }
    const whole = build([merged(parts)]);
    expect(parted.rows).toBe(whole.rows);
    const input = merged(parts);
    for (const name of ['zone', 'label', 'tag', 'model_version']) {
      const a = col(parted, name);
      const b = col(whole, name);
      expect(a.codes.BYTES_PER_ELEMENT).toBe(b.codes.BYTES_PER_ELEMENT);
      for (let r = 0; r < parted.rows; r++) if (valueAt(a, r) !== valueAt(b, r)) expect(valueAt(a, r), `${name} row ${r}`).toBe(valueAt(b, r));
      // The rows are in series order, so the input's order: each row reads back what went in.
      const values = input.columns.find((c) => c.name === name)!.values as ArrayLike<string | null>;
      for (let r = 0; r < parted.rows; r++) if (valueAt(a, r) !== values[r]) expect(valueAt(a, r), `${name} row ${r}`).toBe(values[r]);
    }
  });

  it('key dates past 2059 or before 1880 are kept as Int32, and read back as the rows hold them', () => {
    for (const day0 of [32_760, -32_770]) {
      const t = build([rows([0, 1, 2], 10, () => 'x', day0)]);
      expect(t.keyDate.BYTES_PER_ELEMENT).toBe(4);
      expect(Array.from(t.keyDate.subarray(0, 10))).toEqual(Array.from({ length: 10 }, (_, d) => day0 + d));
    }
    const inside = build([rows([0, 1, 2], 10, () => 'x', 32_757)]);
    expect(inside.keyDate.BYTES_PER_ELEMENT).toBe(2);
    expect(inside.keyDate[9]).toBe(32_766);
  });
});
