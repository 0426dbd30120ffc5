/** The nine demo datasets, one model per named dataset of the spec (2.2). */
import type { DemoDatasetDef } from './dataset-def.js';
import { gbsiEuSystemStress } from './gbsi-eu.js';
import { gbsiUsBacktestSummary, gbsiUsStorageSurprise } from './gbsi-us-reports.js';
import { gbsiUsBalanceMomentum, gbsiUsSystemStress } from './gbsi-us-signals.js';
import { glmiMarginality } from './glmi.js';
import { pemiGridStress } from './pemi.js';
import { wrsiForecastStress } from './wrsi.js';
import { wssiUsDemandShock } from './wssi-us.js';

export const DEMO_DATASETS: readonly DemoDatasetDef[] = [
  gbsiUsSystemStress,
  gbsiUsBalanceMomentum,
  gbsiUsStorageSurprise,
  gbsiUsBacktestSummary,
  gbsiEuSystemStress,
  pemiGridStress,
  glmiMarginality,
  wrsiForecastStress,
  wssiUsDemandShock,
];

export interface DemoDatasetSummary {
  readonly dataset: string;
  readonly seriesKey: readonly string[];
  readonly series: number;
  readonly cadence: string;
  readonly timeUnit: string;
  readonly effective: string;
  readonly valueColumns: readonly string[];
  readonly description: string;
}

/** One line of facts per dataset, for the README and the CLI's help. */
export function describeDemo(): DemoDatasetSummary[] {
  return DEMO_DATASETS.map((d) => ({
    dataset: `${d.productId}/${d.dataset}`,
    seriesKey: d.keyColumns.map((k) => k.name),
    series: d.series.length,
    cadence: d.cadence,
    timeUnit: d.timeUnit,
    effective: describeLag(d),
    valueColumns: d.valueColumns.map((c) => c.name),
    description: d.description,
  }));
}

function describeLag(d: DemoDatasetDef): string {
  const hh = String(Math.floor(d.lag.releaseMinute / 60)).padStart(2, '0');
  const mm = String(d.lag.releaseMinute % 60).padStart(2, '0');
  const when = d.lag.days === 0 ? 'the business date' : `business date + ${d.lag.days} d`;
  return d.effectiveType === 'date32' ? `${when} (Date32; released ${hh}:${mm}Z)` : `${when} ${hh}:${mm}Z`;
}
