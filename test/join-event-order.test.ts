/**
 * asof_join walks each series' events in `at` order (join/event-order.ts): the order must be
 * exactly (series, at) whatever the instants, since the join's pointers only move back as
 * `at` falls. Checked against a plain comparator sort over generated batches: series of one
 * event and of many, empty series, events of no series, ties, instants before 1970, spans of
 * days and of millennia (where a series' instants and places no longer fit one 64-bit word
 * and it is sorted another way), and a single series of many events.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortBySeriesThenTime } from '../src/join/event-order.js';

const US_PER_DAY = 86_400_000_000;
/** 0001-01-01 and 9999-12-31, µs: the instants an `at` can name */
const FIRST_US = -62_135_596_800_000_000;
const LAST_US = 253_402_300_799_000_000; // 9999-12-31T23:59:59Z

interface Batch {
  readonly seriesOf: Int32Array;
  readonly atUs: Float64Array;
  readonly seriesCount: number;
}

/** What the order must be: per series (ascending, no series last), events by `at`. */
function check({ seriesOf, atUs, seriesCount }: Batch): void {
  const order = sortBySeriesThenTime(seriesOf, atUs, seriesCount);
  const n = seriesOf.length;
  expect(order.events.length).toBe(n);
  expect(order.at.length).toBe(n);
  expect(order.start.length).toBe(seriesCount + 1);
  // every event once
  expect([...order.events].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
  const want = Array.from({ length: n }, (_, i) => i)
    .filter((i) => seriesOf[i]! >= 0)
    .sort((a, b) => seriesOf[a]! - seriesOf[b]! || atUs[a]! - atUs[b]!);
  const known = want.length;
  expect(order.start[seriesCount]).toBe(known);
  expect([...order.at]).toEqual(Array.from(order.events, (e) => atUs[e]));
  // the same (series, at) sequence (ties may fall in either order)
  expect([...order.events.subarray(0, known)].map((e) => [seriesOf[e], atUs[e]])).toEqual(want.map((e) => [seriesOf[e], atUs[e]]));
  const counts = new Array<number>(seriesCount).fill(0);
  for (const e of want) counts[seriesOf[e]!]!++;
  expect(Array.from({ length: seriesCount }, (_, s) => order.start[s + 1]! - order.start[s]!)).toEqual(counts);
  // the events of no series come last, in the order given
  expect([...order.events.subarray(known)]).toEqual(Array.from({ length: n }, (_, i) => i).filter((i) => seriesOf[i]! < 0));
}

const span = fc.constantFrom(1, 1000, US_PER_DAY, 1100 * US_PER_DAY, 2 ** 50, LAST_US - FIRST_US);
const batch = fc
  .tuple(fc.integer({ min: 1, max: 12 }), span, fc.integer({ min: 0, max: 300 }), fc.integer({ min: FIRST_US, max: LAST_US }))
  .chain(([seriesCount, width, n, origin]) => {
    const base = Math.min(origin, LAST_US - width);
    const at = fc.oneof(
      fc.integer({ min: 0, max: width }).map((d) => base + d),
      fc.constantFrom(base, base + width),
    );
    return fc.tuple(fc.constant(seriesCount), fc.array(fc.tuple(fc.integer({ min: -1, max: seriesCount - 1 }), at), { minLength: n, maxLength: n }));
  })
  .map(([seriesCount, events]) => ({
    seriesCount,
    seriesOf: Int32Array.from(events, (e) => e[0]),
    atUs: Float64Array.from(events, (e) => e[1]),
  }));

describe('events ordered by (series, at)', () => {
  it('equals a comparator sort over generated batches', () => {
    fc.assert(
      fc.property(batch, (b) => check(b)),
      { numRuns: 150 },
    );
  });

  it('no events, and series with none', () => {
    check({ seriesOf: new Int32Array(0), atUs: new Float64Array(0), seriesCount: 3 });
    check({ seriesOf: Int32Array.of(2, -1, 2), atUs: Float64Array.of(5, 1, 3), seriesCount: 4 });
    check({ seriesOf: Int32Array.of(-1, -1), atUs: Float64Array.of(5, 1), seriesCount: 0 });
  });

  it('events exactly one 64-bit word apart and one past it (the packed sort and the other way)', () => {
    // 4 events: 2 bits of place, so instants up to 2^62 - 1 apart fit and 2^62 does not.
    for (const width of [2 ** 62 - 2 ** 10, 2 ** 62, 2 ** 62 + 2 ** 11]) {
      const base = FIRST_US;
      check({ seriesOf: Int32Array.of(0, 0, 0, 0), atUs: Float64Array.of(base + width, base, base + 2 ** 40, base + width), seriesCount: 1 });
    }
  });

  it('a few events spanning more than 2^53 µs: instants a µs apart stay in order (their differences from the earliest are not exact in a double)', () => {
    // 37 and 38 µs after the epoch both lie 62135596800000040 µs after 0001-01-01 once rounded to a double
    check({ seriesOf: Int32Array.of(0, 0, 0), atUs: Float64Array.of(38, FIRST_US, 37), seriesCount: 1 });
    check({ seriesOf: Int32Array.of(0, 0, 0, 0), atUs: Float64Array.of(LAST_US, FIRST_US + 1, FIRST_US, LAST_US - 60), seriesCount: 1 });
    // just under 2^53 the packed words still sort exactly
    const base = 1_700_000_000_000_000;
    check({ seriesOf: Int32Array.of(0, 0, 0), atUs: Float64Array.of(base + 2 ** 53 - 1, base, base + 2 ** 53 - 2), seriesCount: 1 });
  });

  it('one series of many events, over a year and over millennia', () => {
    const n = 3000; // 12 bits of place: a year's instants fit the packed words, millennia do not
    let x = 7;
    const next = (): number => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) / 4294967296;
    };
    for (const width of [366 * US_PER_DAY, LAST_US - FIRST_US]) {
      const atUs = Float64Array.from({ length: n }, () => FIRST_US + Math.floor(next() * (width / 1024)) * 1024);
      check({ seriesOf: new Int32Array(n), atUs, seriesCount: 1 });
    }
  });
});
