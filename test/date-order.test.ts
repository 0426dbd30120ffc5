/**
 * A generation's (date, series) order (store/date-order.ts) against a naive build on random
 * tables: the order itself (a sort by date then series), each day's start, the blocks'
 * least and greatest thresholds, and every question the resolver asks of it (a day's
 * position, the position after a cursor, the visible keys of a range counted a block at a
 * time, the first block that may hold one). And the order goes with its generation: a
 * resolver that used it holds nothing of it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BLOCK, buildDateOrder, countVisible, dayPosition, positionAfter, skipHidden } from '../src/store/date-order.js';
import { buildSuffixMin, lastVisibleKey } from '../src/store/last-visible.js';
import { DateOrderIndex } from '../src/query/date-order-index.js';
import { LastVisibleIndex } from '../src/query/last-visible-index.js';
import { PageResolver } from '../src/query/page-resolver.js';
import { SeriesValueIndex } from '../src/query/series-value-index.js';
import { parseQuery } from '../src/query/parse-query.js';
import { findProduct } from '../src/catalog/products.js';
import { buildArrowSnapshot, type SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import type { Table } from '../src/store/table.js';
import { buildTableFromArrow } from '../src/store/build-table.js';
import { readArrowSnapshot } from '../src/store/decode-arrow.js';
import { Rng, generateSnapshot } from './support/random-snapshot.js';

/** Random keys as a table holds them: series-major, dates ascending within a series. */
function randomKeys(rng: Rng): { keyDate: Int32Array; keySeries: Int32Array; keyThr: Float64Array } {
  const series = rng.pick([0, 1, 2, 7, 40, 300, 1500]);
  const firstDay = rng.int(-5, 20_000);
  const dates: number[] = [];
  const owners: number[] = [];
  for (let s = 0; s < series; s++) {
    const density = rng.pick([0.05, 0.5, 1]);
    const span = rng.int(0, 60);
    for (let d = firstDay + rng.int(0, 30); d < firstDay + 30 + span; d++) {
      if (rng.chance(density)) {
        dates.push(d);
        owners.push(s);
      }
    }
  }
  const keyThr = Float64Array.from(dates, (d) =>
    // mostly published a little after the date, some backfilled long after, some ties
    rng.chance(0.1) ? (d + rng.int(100, 400)) * 86_400e6 : (d + rng.int(0, 3)) * 86_400e6 + rng.pick([0, 1, rng.int(0, 86_400e6)]),
  );
  return { keyDate: Int32Array.from(dates), keySeries: Int32Array.from(owners), keyThr };
}

describe('date order against a naive build', () => {
  it('on random tables: order, day starts, block bounds, and every search', () => {
    const rng = new Rng(0xda7e);
    for (let trial = 0; trial < 60; trial++) {
      const { keyDate, keySeries, keyThr } = randomKeys(rng);
      const n = keyDate.length;
      const o = buildDateOrder(keyDate, keyThr);
      const naive = Array.from({ length: n }, (_, k) => k).sort((a, b) => keyDate[a]! - keyDate[b]! || keySeries[a]! - keySeries[b]!);
      expect(Array.from(o.keys)).toEqual(naive);
      const dates = naive.map((k) => keyDate[k]!);
      const firstAtOrAfter = (day: number): number => {
        const i = dates.findIndex((d) => d >= day);
        return i < 0 ? n : i;
      };
      for (let b = 0; b * BLOCK < n; b++) {
        const thr = naive.slice(b * BLOCK, (b + 1) * BLOCK).map((k) => keyThr[k]!);
        expect(o.blockMin[b]).toBe(Math.min(...thr));
        expect(o.blockMax[b]).toBe(Math.max(...thr));
      }
      const lo = n === 0 ? 0 : dates[0]!;
      const hi = n === 0 ? 0 : dates[n - 1]!;
      for (let q = 0; q < 40; q++) {
        const day = rng.int(lo - 3, hi + 3);
        expect(dayPosition(o, day)).toBe(firstAtOrAfter(day));
        const s = rng.int(-1, 1600);
        const after = naive.findIndex((k) => keyDate[k]! > day || (keyDate[k] === day && keySeries[k]! > s));
        expect(positionAfter(o, keySeries, day, s)).toBe(after < 0 ? n : after);
        const a = rng.int(0, n);
        const e = rng.int(a, n);
        const t = rng.chance(0.1) ? Infinity : (rng.int(lo - 2, hi + 400) + rng.next()) * 86_400e6;
        const visible = naive.slice(a, e).filter((k) => keyThr[k]! <= t).length;
        expect(countVisible(o, keyThr, a, e, t)).toBe(visible);
        // skipHidden never passes a visible key, and lands on a block boundary, e or a start it was given
        const skip = skipHidden(o, a, e, t);
        expect(naive.slice(a, skip).some((k) => keyThr[k]! <= t)).toBe(false);
        expect(skip === a || skip === e || skip % BLOCK === 0).toBe(true);
      }
    }
  });
});

describe('per-series suffix minimum (latest) against a naive build', () => {
  it('on random tables: every entry, the last visible key of a series from any start under any T, and the bytes both indexes take', () => {
    const rng = new Rng(0x1a57);
    for (let trial = 0; trial < 60; trial++) {
      const { keyDate, keySeries, keyThr } = randomKeys(rng);
      const n = keyDate.length;
      const seriesCount = n === 0 ? 0 : keySeries[n - 1]! + 1;
      const seriesKeyStart = new Int32Array(seriesCount + 1);
      for (let k = 0; k < n; k++) seriesKeyStart[keySeries[k]! + 1] = k + 1;
      for (let s = 0; s < seriesCount; s++) seriesKeyStart[s + 1] = Math.max(seriesKeyStart[s + 1]!, seriesKeyStart[s]!);
      const suffix = buildSuffixMin(keyThr, seriesKeyStart, seriesCount);
      // What a generation counts for its indexes before building them (generation-memory.ts) is what they take built.
      const o = buildDateOrder(keyDate, keyThr);
      const built = o.keys.byteLength + o.dayStart.byteLength + o.blockMin.byteLength + o.blockMax.byteLength;
      expect(DateOrderIndex.plannedBytes({ keyCount: n, keyDate, seriesCount, seriesKeyStart })).toBe(built);
      expect(LastVisibleIndex.plannedBytes({ keyCount: n })).toBe(suffix.byteLength);
      const end = (k: number): number => seriesKeyStart[keySeries[k]! + 1]!;
      const naive = Array.from({ length: n }, (_, k) => Math.min(...Array.from(keyThr.subarray(k, end(k)))));
      expect(Array.from(suffix)).toEqual(naive);
      const days = n === 0 ? [0, 0] : [Math.min(...keyDate), Math.max(...keyDate)];
      for (let q = 0; q < 40 && n > 0; q++) {
        const s = keySeries[rng.int(0, n - 1)]!;
        const a = seriesKeyStart[s]!;
        const e = seriesKeyStart[s + 1]!;
        const lo = rng.int(a, e);
        // thresholds themselves (a key visible exactly at T), just before them, and anywhere
        const t = rng.pick([
          keyThr[rng.int(a, e - 1)]!,
          keyThr[rng.int(a, e - 1)]! - 1,
          (rng.int(days[0]! - 2, days[1]! + 400) + rng.next()) * 86_400e6,
          Infinity,
        ]);
        let naive = -1;
        for (let k = lo; k < e; k++) if (keyThr[k]! <= t) naive = k;
        expect(lastVisibleKey(suffix, lo, e, t)).toBe(naive);
      }
    }
  });
});

const tableOf = (spec: SnapshotSpec): Table => buildTableFromArrow(readArrowSnapshot(buildArrowSnapshot(spec)), 0);

describe('the date order and the suffix minimum go with their generation', () => {
  it('a resolver that read pages from a generation order and latest from its suffix minimum keeps nothing of them once the generation is dropped', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const snap = generateSnapshot(3939, 'wssi_us', 'demand_shock', { series: 200 });
    const product = findProduct('wssi_us')!;
    const resolver = new PageResolver();
    const query = parseQuery('latest=false&limit=50', product, 'demand_shock');
    // as_of before most series' last key: latest looks further back in them
    const instants = [...snap.instantsUs].sort((a, b) => a - b);
    const early = new Date(instants[Math.floor(instants.length / 3)]! / 1000).toISOString();
    const latest = parseQuery(`latest=true&as_of=${early}&limit=50`, product, 'demand_shock');
    let ref: WeakRef<object> | null = null;
    let refLatest: WeakRef<object> | null = null;
    (() => {
      const table = tableOf(snap.spec);
      const gen = { table, seriesIndex: new SeriesValueIndex(table), dateOrder: new DateOrderIndex(table), lastVisible: new LastVisibleIndex(table) };
      expect(resolver.resolve(gen, query, null).count).toBe(50);
      expect(gen.dateOrder.byteSize).toBeGreaterThan(0);
      ref = new WeakRef(gen.dateOrder.get().keys);
      expect(resolver.resolve(gen, latest, null).count).toBeGreaterThan(0);
      expect(gen.lastVisible.byteSize).toBe(LastVisibleIndex.plannedBytes(table));
      expect(gen.dateOrder.byteSize).toBe(DateOrderIndex.plannedBytes(table));
      refLatest = new WeakRef(gen.lastVisible.get());
    })();
    // Another generation answers next, as after a refresh.
    const other = tableOf(generateSnapshot(3940, 'wssi_us', 'demand_shock', { series: 20 }).spec);
    const otherGen = { table: other, seriesIndex: new SeriesValueIndex(other), dateOrder: new DateOrderIndex(other), lastVisible: new LastVisibleIndex(other) };
    resolver.resolve(otherGen, query, null);
    resolver.resolve(otherGen, latest, null);
    for (let i = 0; i < 5 && (ref!.deref() !== undefined || refLatest!.deref() !== undefined); i++) {
      await new Promise((r) => setTimeout(r, 10));
      gc();
    }
    expect(ref!.deref()).toBeUndefined();
    expect(refLatest!.deref()).toBeUndefined();
  });
});
