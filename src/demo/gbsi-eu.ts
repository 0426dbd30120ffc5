/** GBSI-EU: daily gas system stress per EU country, driven by storage fill against its seasonal norm. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import { Ar1, clamp, round, season } from './signal-math.js';
import { stressRegime } from './gbsi-us-signals.js';
import { daysFromCivil } from '../time/instant.js';

/** country, storage capacity TWh, regasification send-out GWh/d (null: no LNG terminal) */
const COUNTRIES = [
  ['DE', 250, 150],
  ['FR', 130, 450],
  ['NL', 140, 350],
  ['IT', 195, 280],
  ['AT', 95, null],
  ['BE', 9, 250],
  ['ES', 35, 700],
  ['PL', 36, 170],
  ['CZ', 43, null],
  ['DK', 10, null],
  ['SK', 38, null],
  ['HU', 67, null],
] as const;

/** Germany's first floating terminal started sending out gas in January 2023. */
const DE_LNG_START = daysFromCivil(2023, 1, 1);

/** The seasonal norm: lowest in late March, fullest in early November. */
function normalFill(day: number): number {
  return 62 + 30 * season(day, 305);
}

/** stress_index, stress_zscore, storage_fill_pct, storage_deficit_twh, lng_sendout_gwh, regime */
function euRow(fill: number, norm: number, capacity: number, local: number, lng: number | null): ValueRow {
  const f = round(clamp(fill, 2, 100), 2);
  const deficitPct = norm - f;
  const z = deficitPct / 8 + local;
  const index = round(clamp(50 + 15 * z, 0, 100), 2);
  return [index, round(z, 3), f, round((deficitPct * capacity) / 100, 2), lng, stressRegime(index)];
}

export const gbsiEuSystemStress: DemoDatasetDef = {
  productId: 'gbsi_eu',
  dataset: 'system_stress',
  description: 'European gas system stress per country, from storage fill vs the seasonal norm and LNG send-out',
  cadence: 'daily',
  timeUnit: 'ms',
  effectiveType: 'timestamp',
  lag: { days: 1, releaseMinute: 7 * 60 },
  observedDelayMinutes: [10, 150],
  keyColumns: [{ name: 'country', type: 'dict-utf8' }],
  series: COUNTRIES.map(([c]) => [c]),
  valueColumns: [
    { name: 'stress_index', type: 'float64', description: '0-100, 50 = normal balance' },
    { name: 'stress_zscore', type: 'float64', description: 'stress in standard deviations' },
    { name: 'storage_fill_pct', type: 'float64', description: 'storage fill, % of working capacity' },
    { name: 'storage_deficit_twh', type: 'float64', description: 'seasonal-norm fill minus actual fill, TWh' },
    { name: 'lng_sendout_gwh', type: 'float64', description: 'LNG send-out, GWh/d; null without a terminal' },
    { name: 'regime', type: 'dict-utf8', description: 'loose | balanced | tight | stressed' },
  ],
  revisionShare: 0.14,
  revisionDelayDays: [1, 20],
  simulate(days, rng) {
    // One European factor (the 2022 supply shock lives here) plus each country's own drift.
    const europe = new Ar1(0, 0, 0.995, 0.5);
    const countries = COUNTRIES.map(() => ({ fill: new Ar1(0, 0, 0.99, 0.6), local: new Ar1(0, 0, 0.9, 0.08), lng: new Ar1(0, 0, 0.85, 0.06) }));
    const out: ValueRow[][] = COUNTRIES.map(() => []);
    for (const day of days) {
      const e = europe.step(rng);
      COUNTRIES.forEach(([code, capacity, sendout], c) => {
        const s = countries[c]!;
        const norm = normalFill(day);
        const fill = norm + e + s.fill.step(rng);
        const lngNoise = s.lng.step(rng);
        const hasLng = sendout !== null && (code !== 'DE' || day >= DE_LNG_START);
        const lng = hasLng ? round(sendout * (1 + 0.2 * season(day, 20) + lngNoise), 1) : null;
        out[c]!.push(euRow(fill, norm, capacity, s.local.step(rng), lng));
      });
    }
    return out;
  },
  revise(row, c, rng) {
    // A storage operator corrects its fill report; the derived stress follows.
    const capacity = COUNTRIES[c]![1];
    const d = rng.nudge(0.05, 0.4);
    // Move away from a bound, so the correction never clamps back to the same figure.
    const fill = num(row, 2) + (num(row, 2) + d > 100 || num(row, 2) + d < 2 ? -d : d);
    const norm = num(row, 2) + (num(row, 3) * 100) / capacity;
    const local = num(row, 1) - (norm - num(row, 2)) / 8;
    const lng = row[4] ?? null;
    return euRow(fill, norm, capacity, local, typeof lng === 'number' ? lng : null);
  },
};
