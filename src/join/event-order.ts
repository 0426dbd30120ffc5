import { endianness } from 'node:os';

/** Events grouped by series, each series' events in ascending `at` (asof-join.ts walks them). */
export interface EventOrder {
  /** event indices: series 0's events in ascending `at`, then series 1's, ..., then the events of no series (in the order given) */
  readonly events: Int32Array;
  /** the `at` of events[j] (read in order by the join, not at random) */
  readonly at: Float64Array;
  /** series s's events are events[start[s] .. start[s + 1]); start[seriesCount] = the events that have a series */
  readonly start: Int32Array;
}

const TWO_32 = 4294967296;
/** Which half of a 64-bit word is its low one, in the platform's order. */
const LO = endianness() === 'LE' ? 0 : 1;
const HI = 1 - LO;

/**
 * Event indices ordered by (series, at), events without a series (-1) last: a counting sort
 * by series, then each series' events sorted by `at` natively with no comparator and no
 * object per event. A series of m events packs each event into one unsigned 64-bit word,
 * (at - the series' earliest at) * 2^b + its place in the series (b bits: 2^b >= m), and
 * sorts the words (BigUint64Array.sort): ties on `at` fall in the order given. When the
 * series' span of instants times 2^b does not fit 64 bits (a series spanning centuries, or
 * a dataset of one series with events over years), or the span reaches 2^53 µs (about 285
 * years, where a difference of two instants is no longer exact in a double), that series is
 * sorted with a comparator.
 */
export function sortBySeriesThenTime(seriesOf: Int32Array, atUs: Float64Array, seriesCount: number): EventOrder {
  const n = seriesOf.length;
  // bucket s holds series s; bucket seriesCount the events of no series
  const start = new Int32Array(seriesCount + 2);
  for (let i = 0; i < n; i++) {
    const s = seriesOf[i]!;
    start[(s < 0 ? seriesCount : s) + 1]!++;
  }
  for (let s = 0; s <= seriesCount; s++) start[s + 1]! += start[s]!;
  const next = start.slice(0, seriesCount + 1);
  const grouped = new Int32Array(n);
  const groupedAt = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = seriesOf[i]!;
    const p = next[s < 0 ? seriesCount : s]!++;
    grouped[p] = i;
    groupedAt[p] = atUs[i]!;
  }
  const events = new Int32Array(n);
  const at = new Float64Array(n);
  const known = start[seriesCount]!;
  events.set(grouped.subarray(known), known);
  at.set(groupedAt.subarray(known), known);
  const words = new BigUint64Array(known);
  const halves = new Uint32Array(words.buffer);
  for (let s = 0; s < seriesCount; s++) {
    const a = start[s]!;
    const e = start[s + 1]!;
    if (e > a && !packedSort(grouped, groupedAt, a, e, words, halves, events, at)) comparatorSort(grouped, groupedAt, a, e, events, at);
  }
  return { events, at, start: start.subarray(0, seriesCount + 1) };
}

/**
 * Positions a..e of `grouped` (one series) into events/at in ascending `at`, through 64-bit
 * words; false, nothing written, when they do not fit.
 */
function packedSort(
  grouped: Int32Array,
  groupedAt: Float64Array,
  a: number,
  e: number,
  words: BigUint64Array,
  halves: Uint32Array,
  events: Int32Array,
  at: Float64Array,
): boolean {
  let min = Infinity;
  let max = -Infinity;
  for (let p = a; p < e; p++) {
    const t = groupedAt[p]!;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  const bits = 32 - Math.clz32(e - a - 1);
  const scale = 2 ** bits;
  // (max - min) * 2^bits + (2^bits - 1) < 2^64: an exact test (both sides are whole powers of two apart).
  // And under 2^53: each at - min below is then exact in a double; beyond, two instants a few
  // µs apart can round to the same difference and fall in the order given, not by `at`.
  if (max - min >= Math.min(2 ** 53, 2 ** (64 - bits))) return false;
  for (let p = a; p < e; p++) {
    const d = groupedAt[p]! - min;
    const dLo = d % TWO_32;
    // d * 2^bits + place, as two 32-bit halves: the low half's carry goes to the high one
    const low = dLo * scale + (p - a);
    const lowWord = low % TWO_32;
    halves[2 * p + LO] = lowWord;
    halves[2 * p + HI] = ((d - dLo) / TWO_32) * scale + (low - lowWord) / TWO_32;
  }
  words.subarray(a, e).sort();
  const mask = scale - 1;
  for (let p = a; p < e; p++) {
    const from = a + (halves[2 * p + LO]! & mask);
    events[p] = grouped[from]!;
    at[p] = groupedAt[from]!;
  }
  return true;
}

/** Positions a..e of `grouped` into events/at in ascending `at`, by a comparator (series the 64-bit words cannot hold). */
function comparatorSort(grouped: Int32Array, groupedAt: Float64Array, a: number, e: number, events: Int32Array, at: Float64Array): void {
  const places = new Int32Array(e - a);
  for (let j = 0; j < places.length; j++) places[j] = a + j;
  places.sort((x, y) => groupedAt[x]! - groupedAt[y]!);
  for (let j = 0; j < places.length; j++) {
    events[a + j] = grouped[places[j]!]!;
    at[a + j] = groupedAt[places[j]!]!;
  }
}
