/** GBSI-US daily signals: system stress and balance momentum per EIA storage region. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import { Ar1, clamp, f32, round, season } from './signal-math.js';

export const US_REGIONS = ['lower48', 'east', 'midwest', 'mountain', 'pacific', 'south_central'] as const;
/** Rough size of each region relative to the Lower 48. */
const US_SCALE = [1, 0.26, 0.22, 0.09, 0.07, 0.36] as const;

export function stressRegime(index: number): string {
  return index < 35 ? 'loose' : index < 55 ? 'balanced' : index < 75 ? 'tight' : 'stressed';
}

/** stress_index, stress_zscore, supply_demand_gap_bcfd, storage_deficit_bcf, regime, alert */
function stressRow(z: number, gap: number, deficit: number): ValueRow {
  const index = round(clamp(50 + 15 * z, 0, 100), 2);
  return [index, round(z, 3), round(gap, 2), round(deficit, 1), stressRegime(index), index >= 75];
}

export const gbsiUsSystemStress: DemoDatasetDef = {
  productId: 'gbsi_us',
  dataset: 'system_stress',
  description: 'US gas system stress index per EIA storage region',
  cadence: 'daily',
  timeUnit: 'us',
  effectiveType: 'timestamp',
  lag: { days: 1, releaseMinute: 14 * 60 },
  observedDelayMinutes: [5, 90],
  keyColumns: [{ name: 'region', type: 'utf8' }],
  series: US_REGIONS.map((r) => [r]),
  valueColumns: [
    { name: 'stress_index', type: 'float64', description: '0-100, 50 = normal balance' },
    { name: 'stress_zscore', type: 'float64', description: 'stress in standard deviations' },
    { name: 'supply_demand_gap_bcfd', type: 'float64', description: 'supply minus weather-adjusted demand, Bcf/d' },
    { name: 'storage_deficit_bcf', type: 'float64', description: 'storage below (+) or above (-) the 5-year average, Bcf' },
    { name: 'regime', type: 'utf8', description: 'loose | balanced | tight | stressed' },
    { name: 'alert', type: 'bool', description: 'stress_index >= 75' },
  ],
  revisionShare: 0.12,
  revisionDelayDays: [1, 30],
  tieShare: 0.164,
  simulate(days, rng) {
    const national = new Ar1(0, 0, 0.97, 0.18);
    const local = US_REGIONS.map(() => new Ar1(0, 0, 0.93, 0.22));
    const deficit = US_SCALE.map((s) => new Ar1(0, 0, 0.995, 5 * s));
    const out: ValueRow[][] = US_REGIONS.map(() => []);
    for (const day of days) {
      const c = national.step(rng);
      const winter = 0.35 * season(day, 20);
      US_REGIONS.forEach((_, r) => {
        const s = US_SCALE[r]!;
        const z = r === 0 ? c + winter + 0.15 * local[r]!.step(rng) : 0.7 * c + winter + 0.6 * local[r]!.step(rng);
        const gap = -3 * s * z + 0.4 * s * rng.normal();
        out[r]!.push(stressRow(z, gap, deficit[r]!.step(rng) + 20 * s * z));
      });
    }
    return out;
  },
  revise(row, r, rng) {
    const z = num(row, 1) + rng.nudge(0.05, 0.35);
    const gap = num(row, 2) + rng.nudge(0.05, 0.3) * US_SCALE[r]!;
    return stressRow(z, gap, num(row, 3));
  },
};

/** Regional balance as production minus consumption and exports, in Bcf/d. */
const US_BASE_BCFD = [100, 34, 21, 9, 7, 36] as const;
/** Feedgas exists where the export terminals are (Lower 48 total and South Central). */
const LNG_SHARE = [1, null, null, null, null, 0.9] as const;

function direction(momentum5: number): string {
  return momentum5 > 0.3 ? 'loosening' : momentum5 < -0.3 ? 'tightening' : 'flat';
}

export const gbsiUsBalanceMomentum: DemoDatasetDef = {
  productId: 'gbsi_us',
  dataset: 'balance_momentum',
  description: 'US gas balance momentum features per EIA storage region',
  cadence: 'daily',
  timeUnit: 'ms',
  effectiveType: 'timestamp',
  lag: { days: 1, releaseMinute: 14 * 60 },
  observedDelayMinutes: [10, 120],
  keyColumns: [{ name: 'region', type: 'dict-utf8' }],
  series: US_REGIONS.map((r) => [r]),
  valueColumns: [
    { name: 'supply_bcfd', type: 'float64', description: 'dry gas production and imports, Bcf/d' },
    { name: 'demand_bcfd', type: 'float64', description: 'consumption and exports, Bcf/d' },
    { name: 'balance_bcfd', type: 'float64', description: 'supply - demand, Bcf/d' },
    { name: 'momentum_5d_bcfd', type: 'float64', description: 'balance minus its 5-day mean (today included)' },
    { name: 'momentum_20d_bcfd', type: 'float64', description: 'balance minus its 20-day mean (today included)' },
    { name: 'acceleration', type: 'float32', description: 'day-on-day change of the 5-day momentum' },
    { name: 'lng_feedgas_bcfd', type: 'float64', description: 'LNG feedgas; null where there are no terminals' },
    { name: 'direction', type: 'dict-utf8', description: 'loosening | flat | tightening' },
  ],
  revisionShare: 0.14,
  revisionDelayDays: [1, 30],
  simulate(days, rng) {
    const first = days[0] ?? 0;
    return US_BASE_BCFD.map((base, r) => {
      const supplyNoise = new Ar1(0, 0, 0.9, 0.012 * base);
      const demandNoise = new Ar1(0, 0, 0.8, 0.03 * base);
      const lngNoise = new Ar1(0, 0, 0.85, 0.4);
      const history: number[] = [];
      let prevM5 = 0;
      return days.map((day): ValueRow => {
        const years = (day - first) / 365.25;
        const supply = base * (1 + 0.02 * years) + supplyNoise.step(rng);
        const demand = base * (1 + 0.02 * years + 0.22 * season(day, 15)) + demandNoise.step(rng);
        const balance = supply - demand;
        history.push(balance);
        const m5 = balance - mean(history, 5);
        const m20 = balance - mean(history, 20);
        const accel = m5 - prevM5;
        prevM5 = m5;
        const share = LNG_SHARE[r] ?? null;
        const lng = share === null ? null : round(share * (10.5 + 1.1 * years + lngNoise.step(rng)), 2);
        return [round(supply, 2), round(demand, 2), round(balance, 2), round(m5, 3), round(m20, 3), f32(round(accel, 3)), lng, direction(m5)];
      });
    });
  },
  revise(row, _r, rng) {
    // A late production restatement moves supply and everything derived from it.
    const d = rng.nudge(0.1, 0.6);
    const m5 = num(row, 3) + d;
    return [
      round(num(row, 0) + d, 2),
      row[1] ?? null,
      round(num(row, 2) + d, 2),
      round(m5, 3),
      round(num(row, 4) + d, 3),
      f32(round(num(row, 5) + d, 3)),
      row[6] ?? null,
      direction(m5),
    ];
  },
};

function mean(history: readonly number[], n: number): number {
  const k = Math.min(n, history.length);
  let s = 0;
  for (let i = history.length - k; i < history.length; i++) s += history[i]!;
  return s / k;
}
