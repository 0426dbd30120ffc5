/**
 * Turns a dataset model into stored versions with the point-in-time history the spec
 * describes, then into a snapshot spec for the Arrow writer. The models only say what the
 * values are; the timing of every version (lags, floors, restatements, ties, rebuilds) is
 * decided here, the same way for every dataset.
 */
import type { ColumnSpec, SnapshotSpec } from '../snapshot/arrow-writer.js';
import { US_PER_DAY, US_PER_SECOND } from '../time/instant.js';
import type { DemoDatasetDef, DemoValue, DemoValueColumn, ValueRow } from './dataset-def.js';
import { Rng } from './prng.js';
import { weekday } from './signal-math.js';

export interface DemoTimeline {
  /** First business date, days since epoch. */
  readonly startDay: number;
  /** Last business date, days since epoch. */
  readonly endDay: number;
  /** The product's vintage floor, days since epoch. */
  readonly floorDay: number;
  /** The snapshot's created_at: nothing is observed or ingested after it. */
  readonly cutoffUs: number;
  readonly seed: string;
}

interface Version {
  readonly obs: number;
  ing: number;
  readonly values: ValueRow;
}

interface Key {
  readonly day: number;
  readonly series: number;
  readonly effDay: number;
  readonly effUs: number;
  readonly live: boolean;
  readonly versions: Version[];
}

const MINUTE = 60 * US_PER_SECOND;
const HOUR = 60 * MINUTE;
const UNIT_US = { s: US_PER_SECOND, ms: 1000, us: 1 } as const;
/** Backfilled history was written by a job that ran early on the floor day. */
const BACKFILL_START = 3 * HOUR;
const BATCH_ROWS = 16_384;

export function buildDemoSnapshot(def: DemoDatasetDef, t: DemoTimeline): SnapshotSpec {
  const id = `${t.seed}/${def.productId}/${def.dataset}`;
  const unit = UNIT_US[def.timeUnit];
  const q = (us: number): number => us - (us % unit);

  const days = businessDays(def.cadence, t.startDay, t.endDay);
  const values = def.simulate(days, new Rng(`${id}/values`));
  const stamps = new Rng(`${id}/stamps`);
  const reviseRng = new Rng(`${id}/revisions`);

  const keys: Key[] = [];
  days.forEach((day, i) => {
    for (let s = 0; s < def.series.length; s++) {
      const effDay = day + def.lag.days;
      const effUs = effDay * US_PER_DAY + def.lag.releaseMinute * MINUTE;
      const live = effDay >= t.floorDay;
      const obs = live
        ? q(effUs + Math.round(stamps.uniform(def.observedDelayMinutes[0], def.observedDelayMinutes[1]) * MINUTE))
        : q(t.floorDay * US_PER_DAY + BACKFILL_START + stamps.int(0, 3 * 3600 * US_PER_SECOND));
      const ing = q(obs + stamps.int(1, 300) * US_PER_SECOND + stamps.int(0, 999_999));
      // Not yet published when the snapshot was taken.
      if (effUs > t.cutoffUs || ing > t.cutoffUs) continue;
      const row = values[s]?.[i];
      if (row === undefined) throw new Error(`${def.productId}/${def.dataset}: model gave no row for series ${s}, day ${i}`);
      keys.push({ day, series: s, effDay, effUs, live, versions: [{ obs, ing, values: row }] });
    }
  });

  const live = keys.filter((k) => k.live);
  const restate = (k: Key, from: Version): ValueRow => {
    const next = def.revise(from.values, k.series, reviseRng, k.day);
    if (sameRow(next, from.values)) throw new Error(`${def.productId}/${def.dataset}: revise() returned an identical row`);
    return next;
  };

  // PIT-4: two versions stamped with the same str_observed_at, told apart only by ingestion.
  for (const k of reviseRng.sample(live, Math.round((def.tieShare ?? 0) * live.length))) {
    const first = k.versions[0]!;
    const ing = q(first.ing + reviseRng.int(5, 180) * US_PER_SECOND + reviseRng.int(0, 999_999));
    if (ing <= t.cutoffUs) k.versions.push({ obs: first.obs, ing, values: restate(k, first) });
  }

  // Section 3: a restated figure is a new version with its own, later str_observed_at.
  const minDelay = def.revisionDelayDays[0] * US_PER_DAY;
  const room = (v: Version): number => t.cutoffUs - HOUR - v.obs;
  const eligible = live.filter((k) => room(k.versions[k.versions.length - 1]!) >= minDelay);
  const revised = reviseRng.sample(eligible, Math.round(def.revisionShare * live.length));
  for (const k of revised) {
    // A quarter of restated figures are restated once more.
    for (let n = 0; n < (reviseRng.chance(0.25) ? 2 : 1); n++) {
      const last = k.versions[k.versions.length - 1]!;
      const delay = revisionDelay(def, room(last), reviseRng);
      if (delay === null) break;
      const obs = q(last.obs + delay);
      const ing = q(obs + reviseRng.int(1, 300) * US_PER_SECOND + reviseRng.int(0, 999_999));
      if (ing > t.cutoffUs) break;
      k.versions.push({ obs, ing, values: restate(k, last) });
    }
  }

  // PIT-3: a full rebuild rewrote str_ingested_at of every row written before it.
  if (def.rebuildDaysBeforeEnd !== undefined) {
    const rebuildUs = (t.endDay - def.rebuildDaysBeforeEnd) * US_PER_DAY + 2 * HOUR;
    let ordinal = 0;
    for (const k of keys) {
      for (const v of k.versions) {
        if (v.ing < rebuildUs) v.ing = q(rebuildUs + ordinal++ * 1000);
      }
    }
  }

  return toSnapshotSpec(def, keys, unit);
}

function revisionDelay(def: DemoDatasetDef, roomUs: number, rng: Rng): number | null {
  const [minDays, maxDays] = def.revisionDelayDays;
  const maxUs = Math.min(maxDays * US_PER_DAY, roomUs);
  if (maxUs < minDays * US_PER_DAY) return null;
  const step = def.revisionStepDays;
  if (step !== undefined) {
    // Restated in a later report: whole steps, released at about the same time of day.
    const steps = Math.floor((maxUs - 15 * MINUTE) / (step * US_PER_DAY));
    if (steps < 1) return null;
    return rng.int(1, steps) * step * US_PER_DAY + rng.int(-600, 600) * US_PER_SECOND;
  }
  return Math.round(rng.uniform(minDays * US_PER_DAY, maxUs));
}

export function businessDays(cadence: DemoDatasetDef['cadence'], startDay: number, endDay: number): number[] {
  const out: number[] = [];
  for (let d = startDay; d <= endDay; d++) if (cadence === 'daily' || weekday(d) === 5) out.push(d);
  return out;
}

function sameRow(a: ValueRow, b: ValueRow): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

function toSnapshotSpec(def: DemoDatasetDef, keys: readonly Key[], unit: number): SnapshotSpec {
  const rows = keys.reduce((n, k) => n + k.versions.length, 0);
  const date = new Int32Array(rows);
  const eff = new Float64Array(rows);
  const obs = new Float64Array(rows);
  const ing = new Float64Array(rows);
  const keyCols: string[][] = def.keyColumns.map(() => new Array<string>(rows));
  const valueCols: DemoValue[][] = def.valueColumns.map(() => new Array<DemoValue>(rows));
  let row = 0;
  for (const k of keys) {
    const seriesKey = def.series[k.series]!;
    for (const v of k.versions) {
      date[row] = k.day;
      eff[row] = def.effectiveType === 'date32' ? k.effDay : k.effUs / unit;
      obs[row] = v.obs / unit;
      ing[row] = v.ing / unit;
      for (let j = 0; j < keyCols.length; j++) keyCols[j]![row] = seriesKey[j]!;
      for (let j = 0; j < valueCols.length; j++) valueCols[j]![row] = v.values[j] ?? null;
      row++;
    }
  }
  const tsUnit = def.timeUnit;
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: date },
    def.effectiveType === 'date32'
      ? { name: 'str_effective_at', type: 'date32', values: eff }
      : { name: 'str_effective_at', type: 'timestamp', unit: tsUnit, values: eff },
    { name: 'str_observed_at', type: 'timestamp', unit: tsUnit, values: obs },
    { name: 'str_ingested_at', type: 'timestamp', unit: tsUnit, values: ing },
    { name: 'model_version', type: 'utf8', values: new Array<string>(rows).fill('1.0') },
    ...def.keyColumns.map((c, j): ColumnSpec => ({ name: c.name, type: c.type, values: keyCols[j]! })),
    ...def.valueColumns.map((c, j) => valueColumn(c, valueCols[j]!)),
  ];
  return {
    columns,
    seriesKey: def.keyColumns.map((c) => c.name),
    batchRows: BATCH_ROWS,
    metadata: { 'pitcache.demo': 'true', 'pitcache.description': def.description },
  };
}

function valueColumn(c: DemoValueColumn, values: DemoValue[]): ColumnSpec {
  const want = c.type === 'bool' ? 'boolean' : c.type === 'utf8' || c.type === 'dict-utf8' ? 'string' : 'number';
  for (const v of values) {
    if (v !== null && typeof v !== want) throw new Error(`demo column ${c.name} (${c.type}) got ${JSON.stringify(v)}`);
  }
  // Checked above: every value is null or of the column's JS type.
  switch (c.type) {
    case 'float64':
    case 'float32':
    case 'int32':
      return { name: c.name, type: c.type, values: values as (number | null)[] };
    case 'utf8':
    case 'dict-utf8':
      return { name: c.name, type: c.type, values: values as (string | null)[] };
    case 'bool':
      return { name: c.name, type: c.type, values: values as (boolean | null)[] };
  }
}
