/** WSSI-US: daily weather-driven gas demand shock per US grid region and its implied storage impact. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import type { Rng } from './prng.js';
import { Ar1, clamp, f32, round } from './signal-math.js';
import { degreeDays } from './weather.js';

/** region_id (EIA-930 region), region_type, gas burn Bcf/d per °C·day, air-conditioning weight */
const REGIONS = [
  ['US48', 'national', 1.6, 1],
  ['CAL', 'grid_region', 0.12, 1.2],
  ['CAR', 'grid_region', 0.1, 1.2],
  ['CENT', 'grid_region', 0.08, 1.1],
  ['FLA', 'grid_region', 0.1, 1.5],
  ['MIDA', 'grid_region', 0.25, 1],
  ['MIDW', 'grid_region', 0.25, 1],
  ['NE', 'grid_region', 0.08, 0.8],
  ['NW', 'grid_region', 0.06, 0.7],
  ['NY', 'grid_region', 0.08, 0.9],
  ['SE', 'grid_region', 0.12, 1.3],
  ['SW', 'grid_region', 0.05, 1.4],
  ['TEN', 'grid_region', 0.05, 1.1],
  ['TEX', 'grid_region', 0.2, 1.6],
] as const;

/** demand_shock_index, temp_anomaly_c, hdd_anomaly, cdd_anomaly, gas_burn_shock_bcfd, storage_impact_bcf, shock_flag, shock_label */
function shockRow(day: number, temp: number, r: number, burnBefore6d: number): ValueRow {
  const [, , sensitivity, heat] = REGIONS[r]!;
  const t = round(temp, 2);
  const dd = degreeDays(day, t, heat);
  const burn = f32(round(sensitivity * (0.7 * dd.hdd + 0.5 * dd.cdd), 3));
  const index = round(clamp(50 + (12 * burn) / sensitivity, 0, 100), 2);
  const label = index >= 75 ? (dd.hdd >= dd.cdd ? 'cold_snap' : 'heat_wave') : index <= 25 ? 'mild' : 'normal';
  return [index, t, dd.hdd, dd.cdd, burn, round(-(burnBefore6d + burn), 3), index >= 75 || index <= 25, label];
}

export const wssiUsDemandShock: DemoDatasetDef = {
  productId: 'wssi_us',
  dataset: 'demand_shock',
  description: 'Weather-driven US gas demand shock per EIA-930 grid region, with the storage draw it implies over 7 days',
  cadence: 'daily',
  timeUnit: 'us',
  effectiveType: 'timestamp',
  lag: { days: 0, releaseMinute: 0 },
  observedDelayMinutes: [360, 450],
  keyColumns: [
    { name: 'region_id', type: 'dict-utf8' },
    { name: 'region_type', type: 'dict-utf8' },
  ],
  series: REGIONS.map(([id, type]) => [id, type]),
  valueColumns: [
    { name: 'demand_shock_index', type: 'float64', description: '0-100, 50 = demand at weather normal' },
    { name: 'temp_anomaly_c', type: 'float64', description: 'population-weighted temperature anomaly, °C' },
    { name: 'hdd_anomaly', type: 'float64', description: 'heating degree-day anomaly, °C·day' },
    { name: 'cdd_anomaly', type: 'float64', description: 'cooling degree-day anomaly, °C·day' },
    { name: 'gas_burn_shock_bcfd', type: 'float32', description: 'extra gas demand from weather, Bcf/d' },
    { name: 'storage_impact_bcf', type: 'float64', description: 'implied storage change from the last 7 days of shocks, Bcf' },
    { name: 'shock_flag', type: 'bool', description: 'index >= 75 or <= 25' },
    { name: 'shock_label', type: 'utf8', description: 'cold_snap | heat_wave | mild | normal' },
  ],
  revisionShare: 0.14,
  revisionDelayDays: [0.5, 5],
  simulate(days, rng) {
    // Regions share one national anomaly, so a cold snap shows up in most of them at once.
    const national = new Ar1(0, 0, 0.82, 1.3);
    const common = days.map(() => national.step(rng));
    return REGIONS.map((_, r) => region(days, rng, r, common));
  },
  revise(row, r, rng, day) {
    // Observed temperatures replaced the forecast part of the window.
    const burnBefore = -num(row, 5) - num(row, 4);
    return shockRow(day, num(row, 1) + rng.nudge(0.15, 0.8), r, burnBefore);
  },
};

function region(days: readonly number[], rng: Rng, r: number, common: readonly number[]): ValueRow[] {
  const local = new Ar1(0, 0, 0.75, 1.2);
  const burns: number[] = [];
  return days.map((day, i): ValueRow => {
    const temp = common[i]! + (r === 0 ? 0.2 : 0.9) * local.step(rng);
    const row = shockRow(
      day,
      temp,
      r,
      burns.slice(-6).reduce((a, b) => a + b, 0),
    );
    burns.push(num(row, 4));
    return row;
  });
}
