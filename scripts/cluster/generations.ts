/**
 * The data the cluster serves, and what every answer must be, computed here from the rows
 * written, not asked of a server: generation g of a dataset is `dates` days x its series
 * with value g*10000 + position, observed at hour 5+g of the day. Each publish restates
 * every value with a later observation, so (no `as_of`, `latest=false`) generation g's
 * answer is exactly generation g's input rows in the contract's order (date, then series
 * key, section 2), and no row of one generation equals a row of another.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterDataset {
  readonly productId: string;
  readonly dataset: string;
  /** The one series-key column, or null for a dataset with an empty series key. */
  readonly keyColumn: string | null;
  /** Its values, already in byte order. */
  readonly series: readonly string[];
  readonly dates: number;
}

/** `/product/dataset` */
export const pathOf = (d: ClusterDataset): string => `/${d.productId}/${d.dataset}`;
export const idOf = (d: ClusterDataset): string => `${d.productId}/${d.dataset}`;

const day = (d: number): string => new Date(Date.UTC(2026, 3, 1 + d)).toISOString().slice(0, 10);
const hour = (g: number): string => String(5 + g).padStart(2, '0');

interface Row {
  readonly date: string;
  readonly observed: string;
  readonly series: string | null;
  readonly value: number;
}

function rowsOf(d: ClusterDataset, g: number): Row[] {
  const rows: Row[] = [];
  const series = d.keyColumn === null ? [null] : d.series;
  for (let i = 0; i < d.dates; i++) {
    for (const s of series) rows.push({ date: day(i), observed: `${day(i)}T${hour(g)}:00:00`, series: s, value: g * 10_000 + rows.length });
  }
  return rows;
}

/** The CSV `pitcache publish` reads for generation g, written into `dir`; returns its path. */
export function writeInput(dir: string, d: ClusterDataset, g: number): string {
  const header = ['date', 'str_effective_at', 'str_observed_at', 'str_ingested_at', 'model_version', ...(d.keyColumn === null ? [] : [d.keyColumn]), 'value'];
  const lines = [header.join(',')];
  for (const r of rowsOf(d, g)) {
    lines.push([r.date, r.date, `${r.observed}Z`, `${r.observed}Z`, '1.0', ...(r.series === null ? [] : [r.series]), String(r.value)].join(','));
  }
  const file = join(dir, `${d.productId}-${d.dataset}-${g}.csv`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/**
 * Generation g's whole answer as the JSON of its `data` rows (section 4: every column in
 * schema order, Date32 as a date, Timestamp[us] with six digits and Z).
 */
export function expectedRowsJson(d: ClusterDataset, g: number): string {
  return JSON.stringify(
    rowsOf(d, g).map((r) => ({
      date: r.date,
      str_effective_at: r.date,
      str_observed_at: `${r.observed}.000000Z`,
      str_ingested_at: `${r.observed}.000000Z`,
      model_version: '1.0',
      ...(d.keyColumn === null ? {} : { [d.keyColumn]: r.series }),
      value: r.value,
    })),
  );
}

export function rowCount(d: ClusterDataset): number {
  return d.dates * (d.keyColumn === null ? 1 : d.series.length);
}
