/**
 * The row order of a table (store/table.ts): (series by key bytes, date, observed, ingested,
 * snapshot position). A snapshot whose rows already come in that order is recognised and
 * not moved; one in any other order is sorted. Both must give the same table: every cell
 * of every physical row, every index array, every step function. Random snapshots of every
 * dataset (all column types, ties, revisions, several record batches) are written shuffled
 * and in order, and compared.
 */
import { describe, expect, it } from 'vitest';
import type { ColumnSpec, SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { buildTableFromArrow } from '../src/store/build-table.js';
import type { Column } from '../src/store/column.js';
import { decodeArrowSnapshot, readArrowSnapshot } from '../src/store/decode-arrow.js';
import { orderBySeriesAndDate } from '../src/store/row-order.js';
import { buildStringDictionary } from '../src/store/string-dictionary.js';
import type { Table } from '../src/store/table.js';
import { orderVersions } from '../src/store/version-order.js';
import { FLOOR_DATE, dayOf, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';

const UNIT_US: Record<string, number> = { s: 1_000_000, ms: 1_000, us: 1 };
const TARGETS = [
  ['gbsi_us', 'system_stress'],
  ['gbsi_eu', 'system_stress'],
  ['pemi', 'grid_stress'],
  ['glmi', 'marginality'],
  ['wrsi', 'forecast_stress'],
  ['wssi_us', 'demand_shock'],
] as const;

/** The physical order, computed the slow and obvious way: a comparator over the rows. */
function physicalOrder(snap: GeneratedSnapshot): number[] {
  const unitOf = (name: string): number => UNIT_US[snap.columns.find((c) => c.name === name)!.unit ?? 'us']!;
  const us = (name: string, i: number): number => Number(snap.rows[i]![name]) * unitOf(name);
  const bytes = snap.rows.map((r) => snap.seriesKey.map((k) => Buffer.from(r[k] as string, 'utf8')));
  return snap.rows
    .map((_, i) => i)
    .sort((a, b) => {
      for (let k = 0; k < snap.seriesKey.length; k++) {
        const c = Buffer.compare(bytes[a]![k]!, bytes[b]![k]!);
        if (c !== 0) return c;
      }
      return (
        (snap.rows[a]!['date'] as number) - (snap.rows[b]!['date'] as number) ||
        us('str_observed_at', a) - us('str_observed_at', b) ||
        us('str_ingested_at', a) - us('str_ingested_at', b) ||
        a - b
      );
    });
}

function permuted(spec: SnapshotSpec, order: readonly number[]): SnapshotSpec {
  return { ...spec, columns: spec.columns.map((c) => ({ ...c, values: order.map((i) => c.values[i]) }) as ColumnSpec) };
}

function tableOf(spec: SnapshotSpec, floorUs: number): Table {
  return buildTableFromArrow(readArrowSnapshot(buildArrowSnapshot(spec)), floorUs);
}

/** A cell as a plain value: codes are numbered by first appearance, so strings are compared, not codes. */
function cell(c: Column, i: number): unknown {
  if (c.validity !== null && c.validity[i] === 0) return null;
  return c.kind === 'string' ? c.dict.values[c.codes[i]!] : c.values[i];
}

function expectSameTable(a: Table, b: Table): void {
  expect(b.rows).toBe(a.rows);
  for (const [k, col] of a.columns.entries()) {
    const other = b.columns[k]!;
    expect(other.name).toBe(col.name);
    for (let i = 0; i < a.rows; i++) expect(cell(other, i), `${col.name} row ${i}`).toEqual(cell(col, i));
  }
  const arrays = ['effectiveUs', 'observedUs', 'ingestedUs', 'rowThr', 'seriesKeyStart', 'keyRowStart', 'keyDate', 'keySeries', 'keyThr'] as const;
  for (const name of arrays) expect(Array.from(b[name]), name).toEqual(Array.from(a[name]));
  for (const name of ['minDate', 'seriesCount', 'keyCount', 'floorUs', 'byteSize'] as const) expect(b[name], name).toBe(a[name]);
  expect(b.latestDateByThr.arrays).toEqual(a.latestDateByThr.arrays);
  expect(b.maxObservedByThr.arrays).toEqual(a.maxObservedByThr.arrays);
}

/** Whether a snapshot takes the path that moves nothing: no sort by (series, date), no version out of order. */
function movesNothing(spec: SnapshotSpec): boolean {
  const snap = decodeArrowSnapshot(buildArrowSnapshot(spec));
  const col = (name: string) => snap.columns.find((c) => c.name === name)!;
  const keys = snap.seriesKey.map((k) => {
    const c = col(k);
    if (c.kind !== 'string') throw new Error('key columns are strings');
    return { codes: c.codes, cardinality: c.strings.length, rank: buildStringDictionary(c.strings).rank };
  });
  const date = (col('date') as { values: Int32Array }).values;
  const order = orderBySeriesAndDate(snap.rows, date, keys);
  if (order.perm !== null) return false;
  const obs = Float64Array.from((col('str_observed_at') as { values: Float64Array }).values);
  const ing = Float64Array.from((col('str_ingested_at') as { values: Float64Array }).values);
  return orderVersions(order.seriesStart, date, obs, ing, { perm: null, rank: null }).perm === null;
}

describe('snapshot order does not change the table', () => {
  for (const [productId, dataset] of TARGETS) {
    it(`${productId}/${dataset}: shuffled, in order, and in order but for the versions of some keys`, () => {
      const floorUs = (dayOf(FLOOR_DATE[productId]!) + 1) * 86_400_000_000 - 1;
      for (const seed of [11, 12, 13]) {
        const snap = generateSnapshot(seed * 1_000_003 + productId.length, productId, dataset);
        const order = physicalOrder(snap);
        const inOrder = permuted(snap.spec, order);
        expect(movesNothing(inOrder)).toBe(true);
        expect(order.every((r, i) => r === i)).toBe(movesNothing(snap.spec));
        const expected = tableOf(inOrder, floorUs);
        expectSameTable(expected, tableOf(snap.spec, floorUs));

        // Swapping two versions of one key (different stamps) leaves (series, date) in order:
        // only that key's versions are sorted again.
        const obs = snap.rows.map((r) => Number(r['str_observed_at']));
        const at = order.findIndex(
          (r, i) =>
            i + 1 < order.length &&
            snap.rows[r]!['date'] === snap.rows[order[i + 1]!]!['date'] &&
            sameSeries(snap, r, order[i + 1]!) &&
            obs[r] !== obs[order[i + 1]!],
        );
        if (at < 0) continue;
        const swapped = [...order];
        [swapped[at], swapped[at + 1]] = [swapped[at + 1]!, swapped[at]!];
        expect(movesNothing(permuted(snap.spec, swapped))).toBe(false);
        expectSameTable(expected, tableOf(permuted(snap.spec, swapped), floorUs));
      }
    });
  }
});

function sameSeries(snap: GeneratedSnapshot, a: number, b: number): boolean {
  return snap.seriesKey.every((k) => snap.rows[a]![k] === snap.rows[b]![k]);
}
