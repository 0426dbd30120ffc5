import { US_PER_DAY } from '../time/instant.js';
import type { Column, IntArray, StringColumn } from './column.js';
import type { DecodedColumn, DecodedSnapshot } from './decode-arrow.js';
import { MinTree } from './min-tree.js';
import { radixSortIndices } from './radix-sort.js';
import { allocF64, allocI32, allocShared, allocU8 } from './shared-memory.js';
import { StepMax } from './step-max.js';
import { buildStringDictionary } from './string-dictionary.js';
import type { Table } from './table.js';

/**
 * Decoded snapshot -> a serving generation (see table.ts for the layout and why).
 * `floorUs` is the end of the product's vintage-floor day.
 */
export function buildTable(snap: DecodedSnapshot, floorUs: number): Table {
  const n = snap.rows;
  const byName = new Map(snap.columns.map((c) => [c.name, c]));
  const col = (name: string): DecodedColumn => byName.get(name)!;
  const dateIn = (col('date') as { values: Int32Array }).values;
  const obsIn = (col('str_observed_at') as { values: Float64Array }).values;
  const ingIn = (col('str_ingested_at') as { values: Float64Array }).values;
  const seriesIn = snap.seriesKey.map((k) => col(k) as Extract<DecodedColumn, { kind: 'string' }>);

  const dictionaries = new Map(
    snap.columns.filter((c) => c.kind === 'string').map((c) => [c.name, buildStringDictionary((c as { strings: string[] }).strings)]),
  );

  // 1. Series: dense ids from the tuple of key codes, then ranked by the contract's order.
  const { seriesOfRow, seriesCount, firstRow } = assignSeries(seriesIn, n);
  const seriesRank = rankSeries(seriesCount, firstRow, seriesIn.map((c) => ({ codes: c.codes, rank: dictionaries.get(c.name)!.rank })));

  // 2. Physical order: (series rank, date) by radix, then PIT-4 order inside each key.
  let minDate = Infinity;
  let maxDate = -Infinity;
  for (let i = 0; i < n; i++) {
    const d = dateIn[i]!;
    if (d < minDate) minDate = d;
    if (d > maxDate) maxDate = d;
  }
  const span = n === 0 ? 1 : maxDate - minDate + 1;
  if (seriesCount * span >= 2 ** 53) throw new Error('date range too wide to index');
  const composite = new Float64Array(n);
  for (let i = 0; i < n; i++) composite[i] = seriesRank[seriesOfRow[i]!]! * span + (dateIn[i]! - minDate);
  const perm = radixSortIndices(composite);
  orderVersionsWithinKeys(perm, composite, obsIn, ingIn);

  // 3. Gather every column into shared memory in that order.
  const columns: Column[] = snap.columns.map((c) => gatherColumn(c, perm, dictionaries));
  const out = new Map(columns.map((c) => [c.name, c]));
  const date = (out.get('date') as { values: Int32Array }).values;
  const observedUs = (out.get('str_observed_at') as { values: Float64Array }).values;
  const ingestedUs = (out.get('str_ingested_at') as { values: Float64Array }).values;
  const eff = out.get('str_effective_at')!;
  let effectiveUs: Float64Array;
  if (eff.kind === 'date32') {
    effectiveUs = allocF64(n);
    for (let i = 0; i < n; i++) effectiveUs[i] = eff.values[i]! * US_PER_DAY;
  } else {
    effectiveUs = (eff as { values: Float64Array }).values;
  }

  // 4. Thresholds: visible under T iff T >= rowThr (table.ts).
  const rowThr = allocF64(n);
  for (let i = 0; i < n; i++) {
    const e = effectiveUs[i]!;
    const o = observedUs[i]!;
    rowThr[i] = o > floorUs && o > e ? o : e;
  }

  // 5. Keys and series ranges.
  let keyCount = 0;
  for (let i = 0; i < n; i++) if (i === 0 || composite[perm[i]!] !== composite[perm[i - 1]!]) keyCount++;
  const keyRowStart = allocI32(keyCount + 1);
  const keyDate = allocI32(keyCount);
  const keySeries = allocI32(keyCount);
  const keyThr = allocF64(keyCount);
  const seriesKeyStart = allocI32(seriesCount + 1);
  let k = -1;
  for (let i = 0; i < n; i++) {
    if (i === 0 || composite[perm[i]!] !== composite[perm[i - 1]!]) {
      k++;
      keyRowStart[k] = i;
      keyDate[k] = date[i]!;
      keySeries[k] = seriesRank[seriesOfRow[perm[i]!]!]!;
      keyThr[k] = rowThr[i]!;
    } else if (rowThr[i]! < keyThr[k]!) {
      keyThr[k] = rowThr[i]!;
    }
  }
  keyRowStart[keyCount] = n;
  let s = 0;
  for (let kk = 0; kk < keyCount; kk++) {
    while (s <= keySeries[kk]!) seriesKeyStart[s++] = kk;
  }
  while (s <= seriesCount) seriesKeyStart[s++] = keyCount;

  const keyThrTree = new MinTree(keyThr);
  const latestDateByThr = StepMax.build(keyThr, keyDate);
  const maxObservedByThr = StepMax.build(rowThr, observedUs);

  const seriesColumns = snap.seriesKey.map((name) => out.get(name) as StringColumn);
  let byteSize = 0;
  for (const c of columns) byteSize += columnBytes(c);
  if (eff.kind === 'date32') byteSize += effectiveUs.byteLength;
  byteSize += rowThr.byteLength + keyRowStart.byteLength + keyDate.byteLength + keySeries.byteLength + keyThr.byteLength;
  byteSize += seriesKeyStart.byteLength + keyThrTree.byteSize + latestDateByThr.byteSize + maxObservedByThr.byteSize;

  return {
    rows: n,
    columns,
    seriesKey: snap.seriesKey,
    seriesColumns,
    floorUs,
    minDate: n === 0 ? 0 : minDate,
    effectiveUs,
    observedUs,
    ingestedUs,
    rowThr,
    seriesCount,
    seriesKeyStart,
    keyCount,
    keyRowStart,
    keyDate,
    keySeries,
    keyThr,
    keyThrTree,
    latestDateByThr,
    maxObservedByThr,
    byteSize,
  };
}

function assignSeries(cols: ReadonlyArray<{ codes: Int32Array; strings: string[] }>, n: number) {
  let seriesOfRow = new Int32Array(n);
  let count = n === 0 ? 0 : 1;
  for (const c of cols) {
    const card = Math.max(1, c.strings.length);
    const next = new Int32Array(n);
    let fresh = 0;
    if (count * card <= 1 << 24) {
      const lut = new Int32Array(count * card).fill(-1);
      for (let i = 0; i < n; i++) {
        const x = seriesOfRow[i]! * card + c.codes[i]!;
        let id = lut[x]!;
        if (id < 0) lut[x] = id = fresh++;
        next[i] = id;
      }
    } else {
      const map = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const x = seriesOfRow[i]! * card + c.codes[i]!;
        let id = map.get(x);
        if (id === undefined) map.set(x, (id = fresh++));
        next[i] = id;
      }
    }
    seriesOfRow = next;
    count = fresh;
  }
  const firstRow = new Int32Array(count).fill(-1);
  for (let i = 0; i < n; i++) if (firstRow[seriesOfRow[i]!] === -1) firstRow[seriesOfRow[i]!] = i;
  return { seriesOfRow, seriesCount: count, firstRow };
}

/** rank[id] = position of series `id` when series are ordered by their key values (UTF-8 byte order, column by column). */
function rankSeries(count: number, firstRow: Int32Array, cols: ReadonlyArray<{ codes: Int32Array; rank: Int32Array }>): Int32Array {
  const ids = Array.from({ length: count }, (_, i) => i);
  ids.sort((a, b) => {
    const ra = firstRow[a]!;
    const rb = firstRow[b]!;
    for (const c of cols) {
      const d = c.rank[c.codes[ra]!]! - c.rank[c.codes[rb]!]!;
      if (d !== 0) return d;
    }
    return 0;
  });
  const rank = new Int32Array(count);
  ids.forEach((id, r) => (rank[id] = r));
  return rank;
}

/**
 * perm is sorted by key and, inside a key, by position (radix sort is stable). Reorders each
 * key's run by (observed, ingested), keeping position order for full ties: PIT-4 plus the
 * contract's final tie-break.
 */
function orderVersionsWithinKeys(perm: Int32Array, composite: Float64Array, obs: Float64Array, ing: Float64Array): void {
  const before = (a: number, b: number): boolean => obs[a]! < obs[b]! || (obs[a] === obs[b] && (ing[a]! < ing[b]! || (ing[a] === ing[b] && a < b)));
  const n = perm.length;
  let start = 0;
  while (start < n) {
    const key = composite[perm[start]!];
    let end = start + 1;
    while (end < n && composite[perm[end]!] === key) end++;
    if (end - start > 32) {
      perm.subarray(start, end).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    } else {
      for (let i = start + 1; i < end; i++) {
        const r = perm[i]!;
        let j = i - 1;
        while (j >= start && before(r, perm[j]!)) {
          perm[j + 1] = perm[j]!;
          j--;
        }
        perm[j + 1] = r;
      }
    }
    start = end;
  }
}

function gatherColumn(c: DecodedColumn, perm: Int32Array, dicts: Map<string, ReturnType<typeof buildStringDictionary>>): Column {
  const validity = c.validity === null ? null : gather(c.validity, perm, allocU8(perm.length));
  switch (c.kind) {
    case 'string':
      return { kind: 'string', name: c.name, validity, codes: gather(c.codes, perm, allocI32(perm.length)), dict: dicts.get(c.name)! };
    case 'int64':
      return { ...c, validity, values: gather(c.values, perm, allocShared(BigInt64Array, perm.length)) };
    case 'float':
      return { ...c, validity, values: gather(c.values, perm, allocShared(c.values.constructor as typeof Float64Array, perm.length)) };
    case 'int':
      return { ...c, validity, values: gather(c.values, perm, allocShared(c.values.constructor as unknown as typeof Int32Array, perm.length) as IntArray) };
    case 'bool':
      return { ...c, validity, values: gather(c.values, perm, allocU8(perm.length)) };
    case 'date32':
      return { ...c, validity, values: gather(c.values, perm, allocI32(perm.length)) };
    case 'timestamp':
      return { ...c, validity, values: gather(c.values, perm, allocF64(perm.length)) };
  }
}

function gather<T extends { [i: number]: unknown; length: number }>(src: T, perm: Int32Array, dst: T): T {
  for (let i = 0; i < perm.length; i++) dst[i] = src[perm[i]!]!;
  return dst;
}

function columnBytes(c: Column): number {
  const v = c.validity?.byteLength ?? 0;
  if (c.kind === 'string') return v + c.codes.byteLength + c.dict.json.byteLength + c.dict.jsonOffsets.byteLength + c.dict.rank.byteLength;
  return v + c.values.byteLength;
}
