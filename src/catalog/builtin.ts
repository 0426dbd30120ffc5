import { Catalog, type ProductSpec } from './catalog.js';

/**
 * The built-in catalog: the six products and nine named datasets of the spec (2.1, 2.2),
 * their filters (4.2, contract 3) and vintage floors (spec 8). It applies when the source
 * has no `catalog.json` (contract 13); `pitcache catalog --builtin` prints it.
 */
const BUILTIN_PRODUCTS: readonly ProductSpec[] = [
  {
    id: 'gbsi_us',
    name: 'Gas Balance Stress Index, US',
    datasets: [
      { name: 'system_stress', description: 'US gas system stress signal' },
      { name: 'balance_momentum', description: 'US gas balance momentum features' },
      { name: 'storage_surprise', description: 'US gas storage surprise events' },
      { name: 'backtest_summary', description: 'Backtest summary of the US gas product' },
    ],
    filters: [],
    floor: '2026-03-02',
  },
  {
    id: 'gbsi_eu',
    name: 'Gas Balance Stress Index, EU',
    datasets: [{ name: 'system_stress', description: 'European gas system stress signal' }],
    filters: [{ param: 'country', allowed: null }],
    floor: '2026-01-13',
  },
  {
    id: 'pemi',
    name: 'Power Event Market Intelligence',
    datasets: [{ name: 'grid_stress', description: 'European power grid stress' }],
    filters: [{ param: 'bidding_zone', allowed: null }],
    floor: '2026-03-02',
  },
  {
    id: 'glmi',
    name: 'Global LNG Marginality Index',
    datasets: [{ name: 'marginality', description: 'LNG marginality signal' }],
    filters: [{ param: 'basin', allowed: ['atlantic', 'pacific', 'middle_east'] }],
    floor: '2026-03-02',
  },
  {
    id: 'wrsi',
    name: 'Weather Risk Stress Index',
    datasets: [{ name: 'forecast_stress', description: 'Weather forecast stress signal' }],
    filters: [
      { param: 'geography', allowed: null },
      { param: 'region_type', allowed: null },
    ],
    floor: '2026-01-13',
  },
  {
    id: 'wssi_us',
    name: 'Weather Storage Shock Index',
    datasets: [{ name: 'demand_shock', description: 'US weather demand shock signal' }],
    filters: [
      { param: 'region_id', allowed: null },
      { param: 'region_type', allowed: null },
    ],
    floor: '2026-03-02',
  },
];

export const BUILTIN_CATALOG = new Catalog(BUILTIN_PRODUCTS);
