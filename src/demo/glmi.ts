/** GLMI: daily LNG marginality per supply basin, from netbacks to Europe and Asia against Henry Hub. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import { civilFromDays } from '../time/instant.js';
import { Ar1, f32, round } from './signal-math.js';

export const BASINS = ['atlantic', 'pacific', 'middle_east'] as const;
/** Shipping cost to Europe and to Asia, $/MMBtu, and daily cargo loadings. */
const ROUTES = [
  { toEurope: 0.7, toAsia: 2.2, cargoes: 5 },
  { toEurope: 2.6, toAsia: 0.9, cargoes: 3 },
  { toEurope: 1.5, toAsia: 1.3, cargoes: 3 },
] as const;
/** Average TTF by year, $/MMBtu: the 2022 crisis is the shape everyone knows. */
const TTF_BY_YEAR: Record<number, number> = { 2021: 16, 2022: 38, 2023: 13, 2024: 11, 2025: 12, 2026: 11 };
const LIQUEFACTION = 2.5;

/** marginality_index, netback_usd_mmbtu, spread_to_hh_usd_mmbtu, shipping_cost_usd_mmbtu, cargo_count, arb_open, marginal_destination */
function lngRow(netback: number, hh: number, shipping: number, cargoes: number, destination: string): ValueRow {
  const nb = round(netback, 3);
  const spread = round(nb - 1.15 * hh - LIQUEFACTION, 3);
  return [round(50 + 50 * Math.tanh((spread - 3) / 5), 2), nb, spread, f32(round(shipping, 2)), cargoes, spread > 0, destination];
}

export const glmiMarginality: DemoDatasetDef = {
  productId: 'glmi',
  dataset: 'marginality',
  description: 'LNG marginality per supply basin: best netback (Europe vs Asia) against Henry Hub plus liquefaction',
  cadence: 'daily',
  timeUnit: 's',
  effectiveType: 'timestamp',
  lag: { days: 1, releaseMinute: 8 * 60 },
  observedDelayMinutes: [5, 60],
  keyColumns: [{ name: 'basin', type: 'dict-utf8' }],
  series: BASINS.map((b) => [b]),
  valueColumns: [
    { name: 'marginality_index', type: 'float64', description: '0-100; 50 = spread to Henry Hub of $3/MMBtu, the long-run norm' },
    { name: 'netback_usd_mmbtu', type: 'float64', description: 'best delivered price minus shipping, $/MMBtu' },
    { name: 'spread_to_hh_usd_mmbtu', type: 'float64', description: 'netback minus 115% Henry Hub minus liquefaction, $/MMBtu' },
    { name: 'shipping_cost_usd_mmbtu', type: 'float32', description: 'shipping cost to the chosen destination, $/MMBtu' },
    { name: 'cargo_count', type: 'int32', description: 'cargoes loaded that day' },
    { name: 'arb_open', type: 'bool', description: 'spread_to_hh_usd_mmbtu > 0' },
    { name: 'marginal_destination', type: 'dict-utf8', description: 'europe | asia' },
  ],
  revisionShare: 0.14,
  revisionDelayDays: [1, 10],
  simulate(days, rng) {
    const logTtf = new Ar1(Math.log(16), 0, 1, 0.04);
    const jkmPremium = new Ar1(0.8, 0.8, 0.95, 0.3);
    const hh = new Ar1(3.5, 3.5, 0.98, 0.12);
    const freight = BASINS.map(() => new Ar1(1, 1, 0.97, 0.04));
    const out: ValueRow[][] = BASINS.map(() => []);
    for (const day of days) {
      const target = TTF_BY_YEAR[civilFromDays(day)[0]] ?? 11;
      const ttf = Math.exp(logTtf.step(rng, 0.03 * (Math.log(target) - logTtf.value)));
      const jkm = ttf + jkmPremium.step(rng);
      const henry = Math.max(1.5, hh.step(rng));
      BASINS.forEach((_, b) => {
        const route = ROUTES[b]!;
        const f = Math.max(0.4, freight[b]!.step(rng));
        const europe = ttf - route.toEurope * f;
        const asia = jkm - route.toAsia * f;
        const toEurope = europe >= asia;
        const shipping = (toEurope ? route.toEurope : route.toAsia) * f;
        out[b]!.push(lngRow(Math.max(europe, asia), henry, shipping, rng.poisson(route.cargoes), toEurope ? 'europe' : 'asia'));
      });
    }
    return out;
  },
  revise(row, _b, rng) {
    // A corrected price assessment moves the netback; Henry Hub is backed out of the spread.
    const nb = num(row, 1);
    const hh = (nb - num(row, 2) - LIQUEFACTION) / 1.15;
    const destination = row[6];
    return lngRow(nb + rng.nudge(0.02, 0.25), hh, num(row, 3), num(row, 4), typeof destination === 'string' ? destination : 'europe');
  },
};
