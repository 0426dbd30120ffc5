import type { FilterSpec } from '../catalog/catalog.js';
import type { StringColumn } from '../store/column.js';
import type { Table } from '../store/table.js';
import { dayOfUs } from '../time/instant.js';
import type { EventBatch } from './event-batch.js';
import { sortBySeriesThenTime } from './event-order.js';

/** What the join is asked (contract 15, 16). */
export interface JoinOptions {
  /** days: a row dated more than this before the UTC date of `at` is no answer; null = any age */
  readonly maxAgeDays: number | null;
  /** the end of the floor day, µs (contract 16) */
  readonly floorUs: number;
  /** before_floor=skip: events before the floor get no row */
  readonly skipBeforeFloor: boolean;
  /** the product's filters: a series-key value outside a filter's allowed list has no row */
  readonly filters: readonly FilterSpec[];
}

/** Per event, in the events' order. */
export interface JoinResult {
  /** the physical row answering event i, or -1 (no such row: its dataset columns are null) */
  readonly rows: Int32Array;
  /** 1 when event i's `at` lies before the floor (its `floor_applied`) */
  readonly floorApplied: Uint8Array;
  /** events with a row */
  readonly matched: number;
  /** any event before the floor (x-floor-applied) */
  readonly anyBeforeFloor: boolean;
}

/**
 * The point-in-time join (contract 15): for each event, the row that
 * `GET ?<series key>=<its values>&as_of=<at>&latest=true` returns, i.e. the key of the
 * event's series with the greatest date that has a version visible at T = `at`
 * (keyThr <= T), resolved by PIT-4 (the last version of that key with rowThr <= T).
 *
 * In one pass: each event's series is found once per distinct value (not per event);
 * events are grouped by series and ordered by `at` (event-order.ts: no object per
 * event); then each series' events are walked from the latest `at` down while one pointer
 * walks the series' keys from its last key down, and another the chosen key's versions:
 * as T falls, the answer key and version can only move back, so each series' keys and
 * versions are walked at most once. Answers land at each event's own index, in the
 * events' order.
 */
export function asofJoin(table: Table, events: EventBatch, opts: JoinOptions): JoinResult {
  const n = events.count;
  const seriesOf = eventSeries(table, events, opts.filters);
  const order = sortBySeriesThenTime(seriesOf, events.atUs, table.seriesCount);
  const rows = new Int32Array(n).fill(-1);
  const floorApplied = new Uint8Array(n);
  const at = events.atUs;
  const { seriesKeyStart, keyThr, keyRowStart, rowThr, keyDate } = table;
  const floorUs = opts.floorUs;
  const maxAge = opts.maxAgeDays;
  let anyBefore = false;
  for (let i = 0; i < n; i++) {
    if (at[i]! < floorUs) {
      floorApplied[i] = 1;
      anyBefore = true;
    }
  }
  let matched = 0;
  const skip = opts.skipBeforeFloor;
  const { events: byTime, at: timeOf, start } = order;
  for (let s = 0; s < table.seriesCount; s++) {
    const lo = seriesKeyStart[s]!;
    let k = seriesKeyStart[s + 1]! - 1;
    let r = -1;
    let rKey = -1;
    for (let j = start[s + 1]! - 1; j >= start[s]!; j--) {
      const t = timeOf[j]!;
      while (k >= lo && keyThr[k]! > t) k--;
      if (k < lo) break; // nothing visible yet for this and every earlier event of the series
      if (skip && t < floorUs) continue;
      if (maxAge !== null && keyDate[k]! < dayOfUs(t) - maxAge) continue;
      if (rKey !== k) {
        rKey = k;
        r = keyRowStart[k + 1]! - 1;
      }
      while (rowThr[r]! > t) r--;
      rows[byTime[j]!] = r;
      matched++;
    }
  }
  return { rows, floorApplied, matched, anyBeforeFloor: anyBefore };
}

/**
 * Each event's series in the table, or -1 (a value the dataset does not hold, or outside a
 * filter's allowed list). Event values are interned per request, so the dataset's code of
 * each distinct value is looked up once; a key of several columns is then found by binary
 * search over the series, which are in the order of their key values' ranks.
 */
function eventSeries(table: Table, events: EventBatch, filters: readonly FilterSpec[]): Int32Array {
  const n = events.count;
  const out = new Int32Array(n);
  const cols = table.seriesColumns;
  const keyCount = cols.length;
  if (keyCount === 0) return out.fill(table.seriesCount > 0 ? 0 : -1);
  // per key column: event code -> dataset code (-1: not held, or not allowed)
  const maps = events.keys.map((ev, c) =>
    datasetCodes(
      ev,
      cols[c]!,
      filters.find((f) => f.param === table.seriesKey[c]),
    ),
  );
  if (keyCount === 1) {
    // one column: the series of each dataset code, once
    const col = cols[0]!;
    const seriesOfCode = new Int32Array(col.dict.values.length).fill(-1);
    for (let s = 0; s < table.seriesCount; s++) seriesOfCode[col.codes[table.keyRowStart[table.seriesKeyStart[s]!]!]!] = s;
    const map = maps[0]!;
    const codes = events.keys[0]!.codes;
    for (let i = 0; i < n; i++) {
      const d = map[codes[i]!]!;
      out[i] = d < 0 ? -1 : seriesOfCode[d]!;
    }
    return out;
  }
  // several columns: ranks of each series' values, then a binary search per event
  const S = table.seriesCount;
  const ranks = new Int32Array(S * keyCount);
  for (let s = 0; s < S; s++) {
    const row = table.keyRowStart[table.seriesKeyStart[s]!]!;
    for (let c = 0; c < keyCount; c++) ranks[s * keyCount + c] = cols[c]!.dict.rank[cols[c]!.codes[row]!]!;
  }
  const want = new Int32Array(keyCount);
  outer: for (let i = 0; i < n; i++) {
    for (let c = 0; c < keyCount; c++) {
      const d = maps[c]![events.keys[c]!.codes[i]!]!;
      if (d < 0) {
        out[i] = -1;
        continue outer;
      }
      want[c] = cols[c]!.dict.rank[d]!;
    }
    let a = 0;
    let b = S - 1;
    out[i] = -1;
    while (a <= b) {
      const mid = (a + b) >>> 1;
      let cmp = 0;
      for (let c = 0; c < keyCount && cmp === 0; c++) cmp = ranks[mid * keyCount + c]! - want[c]!;
      if (cmp === 0) {
        out[i] = mid;
        break;
      }
      if (cmp < 0) a = mid + 1;
      else b = mid - 1;
    }
  }
  return out;
}

/** Per distinct event value: the dataset column's code for it, or -1 (not held, or outside the filter's allowed list). */
function datasetCodes(events: StringColumn, col: StringColumn, filter: FilterSpec | undefined): Int32Array {
  const values = events.dict.values;
  const out = new Int32Array(values.length);
  for (let c = 0; c < values.length; c++) {
    const v = values[c]!;
    const allowed = filter?.allowed ?? null;
    out[c] = allowed !== null && !allowed.includes(v) ? -1 : (col.dict.codeOf.get(v) ?? -1);
  }
  return out;
}
