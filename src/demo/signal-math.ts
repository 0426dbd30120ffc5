/** Shapes the demo series are made of: mean-reverting walks, yearly seasons, rounding. */
import type { Rng } from './prng.js';

const YEAR_DAYS = 365.2425;

/**
 * A yearly cycle in [-1, 1] that peaks on day-of-year `peakDoy` (0 = 1 January). Day
 * numbers count from 1970-01-01, so (day - peak) / year is close enough to the calendar.
 */
export function season(day: number, peakDoy: number): number {
  return Math.cos((2 * Math.PI * (day - peakDoy)) / YEAR_DAYS);
}

/** 1 in deep winter, 0 in high summer: how much a cold spell matters on that day. */
export function winterWeight(day: number): number {
  return (1 + season(day, 15)) / 2;
}

/** Day of week, 0 = Sunday (1970-01-01 was a Thursday). */
export function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** A mean-reverting random walk (AR(1)): the value a series keeps from day to day. */
export class Ar1 {
  constructor(
    private x: number,
    private readonly mean: number,
    private readonly phi: number,
    private readonly sigma: number,
  ) {}

  step(rng: Rng, shock = 0): number {
    this.x = this.mean + this.phi * (this.x - this.mean) + this.sigma * rng.normal() + shock;
    return this.x;
  }

  get value(): number {
    return this.x;
  }
}

export function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

/** Rounds to `digits` decimals, as a published figure would be. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  const r = Math.round(x * f) / f;
  return r === 0 ? 0 : r; // no -0 in the data
}

/** Float32 columns: the value the column will actually hold, so revisions compare honestly. */
export function f32(x: number): number {
  return Math.fround(x);
}
