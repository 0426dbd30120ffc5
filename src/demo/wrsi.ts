/** WRSI: daily weather forecast stress per geography (countries and US ISOs), from the 00Z model run. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import { Ar1, clamp, f32, round, winterWeight } from './signal-math.js';
import { degreeDays, riskLabel } from './weather.js';

/** geography, region_type, climate group (0 = US, 1 = Europe), air-conditioning weight */
const GEOGRAPHIES = [
  ['US', 'country', 0, 1],
  ['ERCOT', 'iso', 0, 1.6],
  ['PJM', 'iso', 0, 1],
  ['MISO', 'iso', 0, 1],
  ['CAISO', 'iso', 0, 1.3],
  ['NYISO', 'iso', 0, 0.9],
  ['ISO-NE', 'iso', 0, 0.8],
  ['SPP', 'iso', 0, 1.3],
  ['DE', 'country', 1, 0.3],
  ['FR', 'country', 1, 0.4],
  ['GB', 'country', 1, 0.2],
] as const;

/** stress_index, temp_anomaly_c, hdd_anomaly, cdd_anomaly, ensemble_spread_c, extreme_flag, dominant_risk */
function forecastRow(day: number, temp: number, heat: number, spread: number): ValueRow {
  const t = round(temp, 2);
  const dd = degreeDays(day, t, heat);
  const stress = round(clamp(35 + 9 * Math.max(dd.hdd, 0) + 11 * Math.max(dd.cdd, 0) + 6 * (spread - 1.6), 0, 100), 2);
  return [stress, t, dd.hdd, dd.cdd, spread, stress >= 75, riskLabel(dd)];
}

export const wrsiForecastStress: DemoDatasetDef = {
  productId: 'wrsi',
  dataset: 'forecast_stress',
  description: 'Weather forecast stress per geography from the 00Z ensemble run (effective on the run date)',
  cadence: 'daily',
  timeUnit: 'ms',
  effectiveType: 'timestamp',
  lag: { days: 0, releaseMinute: 0 },
  observedDelayMinutes: [270, 360],
  keyColumns: [
    { name: 'geography', type: 'utf8' },
    { name: 'region_type', type: 'utf8' },
  ],
  series: GEOGRAPHIES.map(([g, t]) => [g, t]),
  valueColumns: [
    { name: 'stress_index', type: 'float64', description: '0-100 from degree-day anomalies and forecast uncertainty' },
    { name: 'temp_anomaly_c', type: 'float64', description: 'forecast temperature anomaly vs normal, °C' },
    { name: 'hdd_anomaly', type: 'float64', description: 'heating degree-day anomaly, °C·day' },
    { name: 'cdd_anomaly', type: 'float64', description: 'cooling degree-day anomaly, °C·day' },
    { name: 'ensemble_spread_c', type: 'float32', description: 'ensemble standard deviation, °C' },
    { name: 'extreme_flag', type: 'bool', description: 'stress_index >= 75' },
    { name: 'dominant_risk', type: 'dict-utf8', description: 'cold | heat | none' },
  ],
  revisionShare: 0.13,
  revisionDelayDays: [0.25, 3],
  simulate(days, rng) {
    const climates = [new Ar1(0, 0, 0.82, 1.2), new Ar1(0, 0, 0.82, 1.1)];
    const local = GEOGRAPHIES.map(() => new Ar1(0, 0, 0.75, 1.1));
    const spread = GEOGRAPHIES.map(() => new Ar1(1.6, 1.6, 0.9, 0.12));
    const out: ValueRow[][] = GEOGRAPHIES.map(() => []);
    for (const day of days) {
      const common = climates.map((c) => c.step(rng));
      GEOGRAPHIES.forEach(([, , climate, heat], g) => {
        const temp = common[climate]! + (g === 0 || g === 8 ? 0.3 : 0.8) * local[g]!.step(rng);
        const s = f32(round(Math.max(0.3, spread[g]!.step(rng) + 0.8 * winterWeight(day) - 0.4), 2));
        out[g]!.push(forecastRow(day, temp, heat, s));
      });
    }
    return out;
  },
  revise(row, g, rng, day) {
    // A rerun of the bias correction shifted the anomaly; the spread is the ensemble's own.
    return forecastRow(day, num(row, 1) + rng.nudge(0.1, 0.8), GEOGRAPHIES[g]![3], num(row, 4));
  },
};
