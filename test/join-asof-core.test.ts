/**
 * The one-pass join (join/asof-join.ts) on small hand-written histories, in process through
 * join/join-compute.ts, each answer derived by reading the rows: `max_age` at its exact
 * boundary (a row dated max_age days before the UTC date of `at` is kept, one day more is
 * not), values the dataset does not hold, a dataset without a series key, a filter's
 * `allowed` list (a held value outside it answers nothing), and keys of two columns found
 * among several series. The random differential checks (join-compute.test.ts) cover the same
 * rules on generated data; these pin each rule on its own, so a mutation run with few random
 * joins still sees each one.
 */
import { describe, expect, it } from 'vitest';
import { floorUsOf } from '../src/catalog/catalog.js';
import { findProduct } from '../src/catalog/products.js';
import { computeJoin, type JoinRequest } from '../src/join/join-compute.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { sha256Hex, snapshotToTable } from '../src/store/snapshot-to-table.js';
import type { Table } from '../src/store/table.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { HISTORY_ROWS } from './support/history-fixture.js';

function tableOf(productId: string, seriesKey: readonly string[], rows: readonly PitRow[]): Table {
  const bytes = buildArrowSnapshot(pitSnapshot(seriesKey, rows), 'file');
  const product = findProduct(productId)!;
  return snapshotToTable([bytes], {
    parts: [{ object: 'x.arrow', sha256: sha256Hex(bytes), rows: rows.length }],
    filterColumns: product.filters.map((f) => f.param).filter((p) => seriesKey.includes(p)),
    floorUs: floorUsOf(product.floor),
  });
}

/** The tags answering each event of a CSV body (null: no row). */
function tags(productId: string, table: Table, csv: string, over: Partial<JoinRequest> = {}): (string | null)[] {
  const product = over.product ?? findProduct(productId)!;
  const req: JoinRequest = {
    bodyFormat: 'csv',
    format: 'json',
    columns: 'tag',
    maxAgeDays: null,
    beforeFloor: 'floor',
    product,
    floorUs: floorUsOf(product.floor),
    generation: 1,
    retrievedAtUs: Date.UTC(2026, 5, 1) * 1000,
    recordId: 'req_core',
    ...over,
  };
  const out = computeJoin(table, Buffer.from(csv), req);
  const env = JSON.parse(Buffer.from(out.body).toString()) as { data: Array<{ tag: string | null }> };
  expect(env.data.length).toBe(out.count);
  return env.data.map((r) => r.tag);
}

const row = (key: Record<string, string>, date: string, obs: string, tag: string): PitRow => ({ key, date, eff: date, obs, tag, value: 1 });

describe('asof_join, rule by rule', () => {
  const eu = tableOf('gbsi_eu', ['country'], HISTORY_ROWS);
  // FR at 02-05 (UTC date 02-05) sees FR 02-04; DE at 02-05 12:00 sees DE 02-03 (observed 02-05 00:00)
  const body = 'at,country\n2026-02-05T10:00:00+02:00,FR\n2026-02-05T12:00:00Z,DE\n2026-02-05T12:00:00Z,XX\n2026-02-03T12:00:00Z,DE\n';

  it('max_age: kept when the row is dated exactly max_age days before the UTC date of at, dropped one day further', () => {
    expect(tags('gbsi_eu', eu, body)).toEqual(['FR04-b', 'DE03', null, 'DE02-v1']);
    expect(tags('gbsi_eu', eu, body, { maxAgeDays: 2 })).toEqual(['FR04-b', 'DE03', null, 'DE02-v1']);
    // DE 02-03 is 2 days before 02-05: out at 1; DE 02-02 is 1 day before 02-03: kept
    expect(tags('gbsi_eu', eu, body, { maxAgeDays: 1 })).toEqual(['FR04-b', null, null, 'DE02-v1']);
    expect(tags('gbsi_eu', eu, body, { maxAgeDays: 0 })).toEqual([null, null, null, null]);
  });

  it('a value the dataset does not hold answers nothing, whatever its place among the values', () => {
    expect(tags('gbsi_eu', eu, 'at,country\n2026-02-05,AA\n2026-02-05,DE\n2026-02-05,ZZ\n2026-02-05,FR\n2026-02-05,de\n')).toEqual([
      null,
      'DE03',
      null,
      'FR04-b',
      null,
    ]);
  });

  it('a dataset without a series key: every event joins its one series', () => {
    const us = tableOf(
      'gbsi_us',
      [],
      HISTORY_ROWS.filter((r) => r.key?.country === 'FR').map((r) => ({ ...r, key: {} })),
    );
    expect(tags('gbsi_us', us, 'at\n2026-02-02T12:00:00Z\n2026-02-05\n2026-01-01\n')).toEqual(['FR02', 'FR04-b', null]); // nothing effective by 01-01
  });

  it("a filter's allowed list: a value the dataset holds but the list leaves out answers nothing", () => {
    // glmi allows atlantic, pacific, middle_east
    const glmi = tableOf(
      'glmi',
      ['basin'],
      [
        row({ basin: 'arctic' }, '2026-03-10', '2026-03-10T00:00:00Z', 'arctic-10'),
        row({ basin: 'atlantic' }, '2026-03-10', '2026-03-10T00:00:00Z', 'atlantic-10'),
        row({ basin: 'pacific' }, '2026-03-11', '2026-03-11T00:00:00Z', 'pacific-11'),
      ],
    );
    expect(tags('glmi', glmi, 'at,basin\n2026-03-20,arctic\n2026-03-20,atlantic\n2026-03-20,pacific\n2026-03-20,indian\n')).toEqual([
      null,
      'atlantic-10',
      'pacific-11',
      null,
    ]);
    // each key column takes its own filter's list, not another filter's
    const glmiSpec = findProduct('glmi')!;
    const product = { ...glmiSpec, filters: [{ param: 'vessel', allowed: ['none'] }, ...glmiSpec.filters] };
    expect(tags('glmi', glmi, 'at,basin\n2026-03-20,arctic\n2026-03-20,atlantic\n', { product })).toEqual([null, 'atlantic-10']);
  });

  it('a key of two columns: each event finds its own series among several, a pair the dataset does not hold nothing', () => {
    const series = [
      ['north', 'zone'],
      ['north', 'city'],
      ['south', 'zone'],
      ['east', 'city'],
      ['west', 'zone'],
    ] as const;
    const wrsi = tableOf(
      'wrsi',
      ['geography', 'region_type'],
      series.map(([g, t], i) => row({ geography: g, region_type: t }, `2026-02-1${i}`, `2026-02-1${i}T00:00:00Z`, `${g}-${t}`)),
    );
    const events = [...series.map(([g, t]) => `2026-02-28,${g},${t}`), '2026-02-28,south,city', '2026-02-28,east,zone', '2026-02-28,nowhere,zone'];
    expect(tags('wrsi', wrsi, `at,geography,region_type\n${[...events].reverse().join('\n')}\n`)).toEqual(
      [...series.map(([g, t]) => `${g}-${t}`), null, null, null].reverse(),
    );
  });
});
