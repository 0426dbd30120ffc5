/**
 * Hand-placed versions as a dataset both the reference model (reference-model.ts,
 * reference-vintages.ts) and the server read, and a query's every page through its cursor
 * chain: for tests that put versions exactly where a resolver's boundaries are
 * (test/query-scale.test.ts, test/resolver-boundaries.test.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import type { ColumnSpec, SnapshotSpec } from '../../src/snapshot/arrow-writer.js';
import type { Harness } from './harness.js';
import { FLOOR_DATE, dayOf, type ColumnDef, type GeneratedSnapshot, type Row } from './random-snapshot.js';
import { referenceAnswer, type JsonValue } from './reference-model.js';

export const HOUR_US = 3_600_000_000;

export interface Version {
  readonly key: string;
  readonly day: number;
  readonly effUs: number;
  readonly obsUs: number;
  readonly ingUs?: number;
}

/** A dataset of versions as the reference model reads it and as the server loads it (µs timestamps, one key column). */
export function versionDataset(productId: string, name: string, keyColumn: string, versions: readonly Version[]): GeneratedSnapshot {
  const columns: ColumnDef[] = [
    { name: 'date', type: 'date32' },
    { name: 'str_effective_at', type: 'timestamp', unit: 'us' },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us' },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us' },
    { name: 'model_version', type: 'utf8' },
    { name: keyColumn, type: 'utf8' },
    { name: 'value', type: 'float64' },
  ];
  const rows: Row[] = versions.map((v, i) => ({
    date: v.day,
    str_effective_at: v.effUs,
    str_observed_at: v.obsUs,
    str_ingested_at: v.ingUs ?? v.obsUs,
    model_version: '1.0',
    [keyColumn]: v.key,
    value: i,
  }));
  const spec: SnapshotSpec = { seriesKey: [keyColumn], columns: columns.map((c) => ({ ...c, values: rows.map((r) => r[c.name]) }) as unknown as ColumnSpec) };
  return { productId, dataset: name, seed: 0, spec, columns, seriesKey: [keyColumn], rows, keyPools: {}, firstDay: 0, lastDay: 0, instantsUs: [] };
}

/** A day number as `YYYY-MM-DD`. */
export const iso = (day: number): string => new Date(day * 86_400_000).toISOString().slice(0, 10);

/** An instant in µs as an `as_of` with all six fraction digits. */
export const instant = (us: number): string => `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}Z`;

export type JsonRow = Record<string, JsonValue>;

/** Every row of a query through its cursor chain, checking count, has_more and total_count on each page. */
export async function pageChain(h: Harness, path: string, limit: number): Promise<JsonRow[]> {
  const got: JsonRow[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const r = await h.get(`${path}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(r.status, r.text?.slice(0, 300)).toBe(200);
    got.push(...(r.body.data as JsonRow[]));
    const total = r.body.metadata.total_count as number;
    expect(r.body.count).toBe(Math.min(limit, total - (got.length - r.body.count)));
    expect(r.body.has_more).toBe(got.length < total);
    if (!r.body.has_more) {
      expect(got.length).toBe(total);
      return got;
    }
    cursor = encodeURIComponent(r.body.next_cursor as string);
  }
  throw new Error(`${path}: the chain did not end`);
}

/** The same rows in the same order; a difference names the first row that differs. */
export function sameRows(what: string, got: readonly unknown[], expected: readonly unknown[]): void {
  expect(got.length, `${what}: rows`).toBe(expected.length);
  const i = got.findIndex((row, n) => !isDeepStrictEqual(row, expected[n]));
  expect(i, `${what}: first differing row ${JSON.stringify(got[i])} expected ${JSON.stringify(expected[i])}`).toBe(-1);
}

/** A walk-forward's decision grid, window and filters (contract 10). */
export interface Walk {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly window: number;
  readonly filters: Readonly<Record<string, string>>;
}

/** The walk_forward path of `w` (no limit, no cursor). */
export function walkPath(ds: GeneratedSnapshot, w: Walk): string {
  const f = Object.entries(w.filters).map(([k, v]) => `&${k}=${v}`);
  return `/${ds.productId}/${ds.dataset}/walk_forward?decision_from=${iso(w.from)}&decision_to=${iso(w.to)}&step=${w.step}&window=${w.window}${f.join('')}`;
}

/**
 * What contract 10 says `w` answers, read from the reference model: for each decision date
 * D, the rows of `date_from=D-window&date_to=D&as_of=D`, each after its `decision_date` and
 * ending with `floor_applied` (D before the product's vintage floor, contract 16).
 */
export function referenceWalk(ds: GeneratedSnapshot, w: Walk, nowMs: number): JsonRow[] {
  const expected: JsonRow[] = [];
  const floorDay = dayOf(FLOOR_DATE[ds.productId]!);
  for (let d = w.from; d <= w.to; d += w.step) {
    const p = { latest: 'false', date_from: iso(d - w.window), date_to: iso(d), as_of: iso(d), filters: w.filters };
    for (const row of referenceAnswer(ds, p, nowMs).rows) expected.push({ decision_date: iso(d), ...row, floor_applied: d < floorDay });
  }
  return expected;
}
