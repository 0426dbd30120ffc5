/** PEMI: daily European power grid stress per bidding zone, from residual load, outages and reserves. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import { Ar1, clamp, f32, round, season, weekday, winterWeight } from './signal-math.js';
import type { Rng } from './prng.js';

/** bidding zone, peak load MW, how strongly load follows winter (electric heating) */
const ZONES = [
  ['DE-LU', 72000, 0.1],
  ['FR', 80000, 0.22],
  ['NL', 16000, 0.08],
  ['BE', 12500, 0.1],
  ['AT', 10500, 0.1],
  ['PL', 25000, 0.1],
  ['CZ', 10500, 0.1],
  ['IT-NORD', 27000, 0.04],
  ['ES', 38000, 0.05],
  ['DK1', 3800, 0.1],
  ['DK2', 2700, 0.1],
  ['NO2', 5500, 0.2],
  ['SE3', 15000, 0.2],
  ['FI', 14000, 0.22],
  ['CH', 10000, 0.12],
] as const;

/** grid_stress_index, residual_load_mw, reserve_margin_mw, forced_outage_mw, event_count, price_spike */
function gridRow(peak: number, residual: number, dispatchable: number, outage: number | null, assumedOutage: number, events: number): ValueRow {
  const reserve = dispatchable - residual - (outage ?? assumedOutage);
  const stress = round(clamp(100 * (1 - reserve / (0.6 * peak)), 0, 100), 2);
  return [stress, f32(Math.round(residual)), Math.round(reserve), outage === null ? null : Math.round(outage), events, stress >= 85 || events >= 3];
}

export const pemiGridStress: DemoDatasetDef = {
  productId: 'pemi',
  dataset: 'grid_stress',
  description: 'European power grid stress per bidding zone; a full rebuild rewrote str_ingested_at of all earlier rows',
  cadence: 'daily',
  timeUnit: 'us',
  effectiveType: 'timestamp',
  lag: { days: 0, releaseMinute: 0 },
  observedDelayMinutes: [30, 240],
  keyColumns: [{ name: 'bidding_zone', type: 'utf8' }],
  series: ZONES.map(([z]) => [z]),
  valueColumns: [
    { name: 'grid_stress_index', type: 'float64', description: '0-100 from the reserve margin relative to peak load' },
    { name: 'residual_load_mw', type: 'float32', description: 'load minus wind and solar, MW' },
    { name: 'reserve_margin_mw', type: 'float64', description: 'available dispatchable capacity minus residual load, MW' },
    { name: 'forced_outage_mw', type: 'float64', description: 'unplanned unavailability, MW; null while the TSO report is missing' },
    { name: 'event_count', type: 'int32', description: 'grid events (alerts, emergency actions) that day' },
    { name: 'price_spike', type: 'bool', description: 'day-ahead price spike flagged' },
  ],
  revisionShare: 0.14,
  revisionDelayDays: [1, 14],
  rebuildDaysBeforeEnd: 103,
  simulate(days, rng) {
    return ZONES.map(([, peak, heating]) => zone(days, rng, peak, heating));
  },
  revise(row, z, rng) {
    // A late outage report: the unavailability, and so the reserve and stress, change.
    const peak = ZONES[z]![1];
    const outage = row[3];
    const before = typeof outage === 'number' ? outage : 0.06 * peak;
    const after = Math.max(0, before + Math.abs(rng.nudge(0.003, 0.02)) * peak * (typeof outage === 'number' && rng.chance(0.3) ? -1 : 1));
    const reserve = num(row, 2) + before;
    const residual = num(row, 1);
    return gridRow(peak, residual, reserve + residual, after, after, num(row, 4) + (rng.chance(0.2) ? 1 : 0));
  },
};

function zone(days: readonly number[], rng: Rng, peak: number, heating: number): ValueRow[] {
  const weather = new Ar1(0, 0, 0.8, 0.03);
  const wind = new Ar1(0.2, 0.2, 0.75, 0.06);
  const outages = new Ar1(0.06, 0.06, 0.9, 0.01);
  return days.map((day): ValueRow => {
    const weekend = weekday(day) === 0 || weekday(day) === 6 ? 0.08 : 0;
    const load = peak * (0.64 + heating * season(day, 15) - weekend + weather.step(rng));
    const renewables = peak * clamp(wind.step(rng) + 0.08 * winterWeight(day) + 0.06 * (1 - winterWeight(day)), 0.02, 0.6);
    const dispatchable = peak * (0.8 - 0.08 * (1 - winterWeight(day)));
    const outage = peak * Math.max(0.005, outages.step(rng));
    const residual = load - renewables;
    const reserveRatio = (dispatchable - residual - outage) / peak;
    const events = rng.poisson(0.15 + 3 * Math.max(0, 0.15 - reserveRatio) * 10);
    return gridRow(peak, residual, dispatchable, rng.chance(0.015) ? null : outage, outage, events);
  });
}
