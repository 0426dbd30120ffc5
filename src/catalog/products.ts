/**
 * The six products and nine named datasets of the spec (2.1, 2.2), their filters (4.2,
 * contract 3) and vintage floors (spec 8). This table is the only place they are named.
 */
export interface FilterSpec {
  /** Query parameter name; it is also the series-key column it filters. */
  readonly param: string;
  /** Allowed values; null means any value. */
  readonly allowed: readonly string[] | null;
}

export interface ProductSpec {
  readonly id: string;
  readonly name: string;
  readonly datasets: readonly string[];
  readonly filters: readonly FilterSpec[];
  /** Vintage floor date (spec 8), YYYY-MM-DD. */
  readonly floor: string;
}

export const PRODUCTS: readonly ProductSpec[] = [
  {
    id: 'gbsi_us',
    name: 'Gas Balance Stress Index, US',
    datasets: ['system_stress', 'balance_momentum', 'storage_surprise', 'backtest_summary'],
    filters: [],
    floor: '2026-03-02',
  },
  {
    id: 'gbsi_eu',
    name: 'Gas Balance Stress Index, EU',
    datasets: ['system_stress'],
    filters: [{ param: 'country', allowed: null }],
    floor: '2026-01-13',
  },
  {
    id: 'pemi',
    name: 'Power Event Market Intelligence',
    datasets: ['grid_stress'],
    filters: [{ param: 'bidding_zone', allowed: null }],
    floor: '2026-03-02',
  },
  {
    id: 'glmi',
    name: 'Global LNG Marginality Index',
    datasets: ['marginality'],
    filters: [{ param: 'basin', allowed: ['atlantic', 'pacific', 'middle_east'] }],
    floor: '2026-03-02',
  },
  {
    id: 'wrsi',
    name: 'Weather Risk Stress Index',
    datasets: ['forecast_stress'],
    filters: [
      { param: 'geography', allowed: null },
      { param: 'region_type', allowed: null },
    ],
    floor: '2026-01-13',
  },
  {
    id: 'wssi_us',
    name: 'Weather Storage Shock Index',
    datasets: ['demand_shock'],
    filters: [
      { param: 'region_id', allowed: null },
      { param: 'region_type', allowed: null },
    ],
    floor: '2026-03-02',
  },
];

const byId = new Map(PRODUCTS.map((p) => [p.id, p]));

export function findProduct(id: string): ProductSpec | undefined {
  return byId.get(id);
}

export function isNamedDataset(productId: string, dataset: string): boolean {
  return byId.get(productId)?.datasets.includes(dataset) ?? false;
}

export function allNamedDatasets(): Array<{ productId: string; dataset: string }> {
  return PRODUCTS.flatMap((p) => p.datasets.map((dataset) => ({ productId: p.id, dataset })));
}
