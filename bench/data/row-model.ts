/**
 * The values and version history of one benchmark dataset, row by row. Values come from the
 * demo model itself (its simulate() over the first year, replayed with a per-series shift and
 * scale), so columns, nulls and labels look like the demo's; version timing follows
 * src/demo/build-dataset.ts (lags, backfill on the floor day, ties, restatements, a
 * rebuild), applied key by key so nothing but the current key is held in memory.
 */
import type { DemoValue, ValueRow } from '../../src/demo/dataset-def.js';
import { Rng } from '../../src/demo/prng.js';
import { DEMO_START_DATE } from '../../src/demo/generate.js';
import { US_PER_DAY, US_PER_SECOND, parseDate } from '../../src/time/instant.js';
import { GENERATOR_VERSION, businessDaysOf, datasetIdOf, type DatasetPlan } from './plan.js';

const MINUTE = 60 * US_PER_SECOND;
const HOUR = 60 * MINUTE;
const UNIT_US = { s: US_PER_SECOND, ms: 1000, us: 1 } as const;
const TEMPLATE_DAYS = 371;
const DEMO_START_DAY = parseDate(DEMO_START_DATE)!;
/** Backfilled history was written by a job early on the floor day (as the demo). */
const BACKFILL_START = 3 * HOUR;

export interface Version {
  obs: number;
  ing: number;
  /** index into the template, or a revised row */
  values: ValueRow;
}

export interface KeyRows {
  day: number;
  series: number;
  hour: number;
  /** µs, or days for a Date32 effective column */
  eff: number;
  versions: Version[];
}

export class RowModel {
  readonly days: number[];
  readonly hours: number;
  private readonly template: ValueRow[][];
  private readonly shift: Int32Array;
  private readonly scale: Float64Array;
  private readonly reviseCol: number;
  private readonly floatCols: number[];
  private readonly rng: Rng;
  private readonly unit: number;
  private rebuildOrdinal = 0;
  private readonly reused: KeyRows = { day: 0, series: 0, hour: 0, eff: 0, versions: [] };
  /** floors µs to the dataset's time unit */
  private readonly quantize = (us: number): number => us - (us % this.unit);

  constructor(private readonly plan: DatasetPlan) {
    const def = plan.def;
    const id = `${GENERATOR_VERSION}/${plan.startDay}/${datasetIdOf(plan)}`;
    this.days = businessDaysOf(plan);
    this.hours = plan.hourly ? 24 : 1;
    // The demo's own period: its models know the price levels of those years only.
    const templateDays = businessDaysOf({ ...plan, startDay: DEMO_START_DAY, endDay: DEMO_START_DAY + 2 * TEMPLATE_DAYS }).slice(0, TEMPLATE_DAYS);
    this.template = def.simulate(templateDays, new Rng(`${id}/template`));
    const r = new Rng(`${id}/series`);
    this.shift = Int32Array.from(plan.series, () => r.int(0, TEMPLATE_DAYS - 1));
    // Base series keep their own level; synthetic ones are a scaled copy of a base series.
    this.scale = Float64Array.from(plan.series, (_, s) => (s < def.series.length ? 1 : r.uniform(0.5, 1.5)));
    this.floatCols = def.valueColumns.flatMap((c, j) => (c.type === 'float64' || c.type === 'float32' ? [j] : []));
    this.reviseCol = def.valueColumns.findIndex((c) => c.type === 'float64');
    if (this.reviseCol < 0) throw new Error(`${datasetIdOf(plan)}: no float64 column to restate`);
    this.rng = new Rng(`${id}/rows`);
    this.unit = UNIT_US[def.timeUnit];
  }

  /** Distinct strings of a value column, in first-seen order (its fixed dictionary). */
  wordsOf(valueCol: number): string[] {
    const seen = new Set<string>();
    for (const rows of this.template) for (const row of rows) if (typeof row[valueCol] === 'string') seen.add(row[valueCol]);
    return [...seen];
  }

  /**
   * The key of series `s`, hour `h` on business day `dayIndex`, its versions in PIT-4 order
   * (observed, ingested), or null when it has no row (not yet effective or ingested by the
   * cutoff). The object is reused: copy what you keep. Keys are drawn in the order asked,
   * from one random stream: the writer asks in the table's physical order.
   */
  key(s: number, h: number, dayIndex: number): KeyRows | null {
    const p = this.plan;
    const def = p.def;
    const rng = this.rng;
    const q = this.quantize;
    const day = this.days[dayIndex]!;
    const effDay = day + def.lag.days;
    const live = effDay >= p.floorDay;
    const rebuildUs = def.rebuildDaysBeforeEnd === undefined ? -Infinity : (p.endDay - def.rebuildDaysBeforeEnd) * US_PER_DAY + 2 * HOUR;
    const [minDelay, maxDelay] = def.revisionDelayDays;
    // Grid data of hour h is known once the hour is over; a forecast run publishes all hours at once.
    const hourUs = p.hourly && def.productId === 'pemi' ? (h + 1) * HOUR : 0;
    const effUs = effDay * US_PER_DAY + def.lag.releaseMinute * MINUTE + hourUs;
    if (effUs > p.cutoffUs) return null;
    const obs = live
      ? q(effUs + Math.round(rng.uniform(def.observedDelayMinutes[0], def.observedDelayMinutes[1]) * MINUTE))
      : q(p.floorDay * US_PER_DAY + BACKFILL_START + rng.int(0, 3 * 3600 * US_PER_SECOND));
    const ing = q(obs + rng.int(1, 300) * US_PER_SECOND + rng.int(0, 999_999));
    if (ing > p.cutoffUs) return null;
    const versions: Version[] = [{ obs, ing, values: this.valuesOf(s, dayIndex, h) }];
    // PIT-4: a second version at the same str_observed_at, told apart by ingestion only.
    if (live && rng.chance(def.tieShare ?? 0)) {
      const ing2 = q(ing + rng.int(5, 180) * US_PER_SECOND + rng.int(0, 999_999));
      if (ing2 <= p.cutoffUs) versions.push({ obs, ing: ing2, values: this.restate(versions[0]!.values) });
    }
    // Section 3: restatements, also of backfilled history (then observed after the floor).
    if (rng.chance(def.revisionShare)) {
      for (let n = rng.chance(0.25) ? 2 : 1; n > 0; n--) {
        const last = versions[versions.length - 1]!;
        const room = p.cutoffUs - HOUR - last.obs;
        const hi = Math.min(maxDelay * US_PER_DAY, room);
        if (hi < minDelay * US_PER_DAY) break;
        const obs2 = q(last.obs + Math.round(rng.uniform(minDelay * US_PER_DAY, hi)));
        const ing2 = q(obs2 + rng.int(1, 300) * US_PER_SECOND + rng.int(0, 999_999));
        if (ing2 > p.cutoffUs) break;
        versions.push({ obs: obs2, ing: ing2, values: this.restate(last.values) });
      }
    }
    // PIT-3: a full rebuild rewrote str_ingested_at of everything written before it.
    for (const v of versions) if (v.ing < rebuildUs) v.ing = q(rebuildUs + this.rebuildOrdinal++ * 1000);
    // The restamp can reorder same-observed versions; PIT-4 order is (observed, ingested).
    if (versions.length > 1) versions.sort((a, b) => a.obs - b.obs || a.ing - b.ing);
    const key = this.reused;
    key.day = day;
    key.series = s;
    key.hour = h;
    key.eff = def.effectiveType === 'date32' ? effDay : effUs;
    key.versions = versions;
    return key;
  }

  private valuesOf(s: number, dayIndex: number, h: number): ValueRow {
    const base = s % this.template.length;
    const rows = this.template[base]!;
    const row = rows[(dayIndex + this.shift[s]!) % rows.length]!;
    const scale = this.scale[s]! * (this.hours === 1 ? 1 : 1 + 0.15 * Math.sin((Math.PI * (h - 6)) / 12));
    if (scale === 1) return row;
    const out = row.slice();
    for (const j of this.floatCols) out[j] = scaled(out[j] ?? null, scale, this.plan.def.valueColumns[j]!.type === 'float32');
    return out;
  }

  private restate(row: ValueRow): ValueRow {
    const out = row.slice();
    const v = out[this.reviseCol];
    const base = typeof v === 'number' ? v : 0;
    out[this.reviseCol] = round3(base + (this.rng.chance(0.5) ? 1 : -1) * (Math.abs(base) * this.rng.uniform(0.005, 0.05) + 0.1));
    return out;
  }
}

function scaled(v: DemoValue, scale: number, f32: boolean): DemoValue {
  if (typeof v !== 'number') return v;
  return f32 ? Math.fround(Math.round(v * scale * 100) / 100) : round3(v * scale);
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
