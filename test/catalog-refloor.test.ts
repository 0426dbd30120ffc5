/**
 * A catalog that changes a product's floor (contract 13) re-floors the loaded tables
 * instead of decoding them again: refloorTable must give exactly the table a build with
 * the new floor gives (every threshold and index), and share the columns.
 */
import { describe, expect, it } from 'vitest';
import { floorUsOf } from '../src/catalog/catalog.js';
import { buildTableFromArrow, refloorTable } from '../src/store/build-table.js';
import { readArrowSnapshot } from '../src/store/decode-arrow.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import type { Table } from '../src/store/table.js';
import { generateSnapshot } from './support/random-snapshot.js';

/** Every array and index of a table, as plain numbers (for a deep comparison). */
function visible(t: Table): unknown {
  const probe = [-Infinity, ...Array.from(t.rowThr).slice(0, 50), Infinity];
  return {
    floorUs: t.floorUs,
    rowThr: Array.from(t.rowThr),
    keyThr: Array.from(t.keyThr),
    tree: t.keyThrTree.arrays.map((a) => Array.from(a)),
    latest: probe.map((x) => t.latestDateByThr.query(x)),
    observed: probe.map((x) => t.maxObservedByThr.query(x)),
    keys: [Array.from(t.keyRowStart), Array.from(t.keyDate), Array.from(t.keySeries), Array.from(t.seriesKeyStart)],
    byteSize: t.byteSize,
  };
}

describe('refloorTable', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: equals a build with the new floor, for a later, an earlier and no floor`, () => {
      const snap = readArrowSnapshot(buildArrowSnapshot(generateSnapshot(seed, 'gbsi_eu', 'system_stress').spec));
      const first = buildTableFromArrow(snap, floorUsOf('2026-01-13'));
      for (const floor of ['2026-03-02', '2020-01-01', null]) {
        const again = readArrowSnapshot(buildArrowSnapshot(generateSnapshot(seed, 'gbsi_eu', 'system_stress').spec));
        const want = buildTableFromArrow(again, floorUsOf(floor));
        const got = refloorTable(first, floorUsOf(floor));
        expect(visible(got)).toEqual(visible(want));
        expect(got.columns).toBe(first.columns);
      }
    });
  }
});
