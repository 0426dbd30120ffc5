/**
 * Contract 6 and 8: snapshots refused at load. Each named dataset gets one fault; a refused
 * dataset answers 503 and /readyz (200 once loading is over) names it with a reason, while
 * the good dataset serves. Files are written by hand here, not by the server's publisher.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordBatch, RecordBatchFileWriter, Schema, Table } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot, buildArrowTable, type ColumnSpec, type IpcFormat, type SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { ManualClock } from '../src/time/clock.js';
import { ADMIN_KEY, startInProcessHarness, type Harness } from './support/harness.js';
import { day, expectError, micros, rowsOf } from './support/fixtures.js';

const OBJECT = 'snapshots/00000001.arrow';
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A valid two-row snapshot with the given series-key columns (Utf8), before any fault is put in. */
function validSpec(key: Record<string, string> = {}): SnapshotSpec {
  const two = <T>(v: T): T[] => [v, v];
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: [day('2026-04-01'), day('2026-04-02')] },
    { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: [micros('2026-04-02'), micros('2026-04-03')] },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: [micros('2026-04-02T06:00:00Z'), micros('2026-04-03T06:00:00Z')] },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: [micros('2026-04-02T06:00:00Z'), micros('2026-04-03T06:00:00Z')] },
    { name: 'model_version', type: 'utf8', values: two('1.0') },
    ...Object.entries(key).map(([name, v]): ColumnSpec => ({ name, type: 'utf8', values: two(v) })),
    { name: 'value', type: 'float64', values: [1, 2] },
  ];
  return { seriesKey: Object.keys(key), columns };
}

/** Replaces one column of a spec. */
function withColumn(spec: SnapshotSpec, column: ColumnSpec): SnapshotSpec {
  return { ...spec, columns: spec.columns.map((c) => (c.name === column.name ? column : c)) };
}

function withoutColumn(spec: SnapshotSpec, name: string): SnapshotSpec {
  return { ...spec, columns: spec.columns.filter((c) => c.name !== name) };
}

/** The snapshot with no schema metadata at all (the writer always adds pitcache.series_key). */
function withoutMetadata(spec: SnapshotSpec): Uint8Array {
  const t = buildArrowTable(spec);
  const schema = new Schema(t.schema.fields, new Map());
  const table = new Table(
    schema,
    t.batches.map((b) => new RecordBatch(schema, b.data)),
  );
  return new RecordBatchFileWriter().writeAll(table).toUint8Array(true);
}

interface Publish {
  readonly bytes?: Uint8Array;
  /** written instead of a manifest built from the bytes */
  readonly manifestText?: string;
  readonly manifest?: Record<string, unknown>;
  /** when false, the object is not written (the manifest names a missing file) */
  readonly writeObject?: boolean;
}

async function publish(dir: string, productId: string, dataset: string, p: Publish): Promise<void> {
  const folder = join(dir, productId, dataset);
  await mkdir(join(folder, 'snapshots'), { recursive: true });
  const bytes = p.bytes ?? new Uint8Array(0);
  if (p.writeObject !== false) await writeFile(join(folder, OBJECT), bytes);
  const manifest = {
    format: 'pitcache-snapshot/1',
    product_id: productId,
    dataset,
    generation: 1,
    object: OBJECT,
    sha256: sha256(bytes),
    rows: 2,
    created_at: '2026-11-01T00:00:00Z',
    ...p.manifest,
  };
  await writeFile(join(folder, 'manifest.json'), p.manifestText ?? JSON.stringify(manifest));
}

interface Fault {
  readonly dataset: string;
  readonly fault: string;
  readonly publish: Publish;
  /** what the reason must mention */
  readonly reason: RegExp;
}

const bytesOf = (spec: SnapshotSpec, format: IpcFormat = 'file') => buildArrowSnapshot(spec, format);
const arrowOf = (spec: SnapshotSpec) => ({ bytes: bytesOf(spec) });

const FAULTS_A: Fault[] = [
  {
    dataset: 'gbsi_us/system_stress',
    fault: 'sha256 mismatch',
    publish: { bytes: bytesOf(validSpec()), manifest: { sha256: sha256(new Uint8Array([1])) } },
    reason: /sha-?256/i,
  },
  {
    dataset: 'gbsi_us/balance_momentum',
    fault: 'missing required column',
    publish: arrowOf(withoutColumn(validSpec(), 'str_ingested_at')),
    reason: /str_ingested_at/,
  },
  {
    dataset: 'gbsi_us/storage_surprise',
    fault: 'date as Utf8',
    publish: arrowOf(withColumn(validSpec(), { name: 'date', type: 'utf8', values: ['2026-04-01', '2026-04-02'] })),
    reason: /\bdate\b/,
  },
  {
    dataset: 'gbsi_us/backtest_summary',
    fault: 'nanosecond timestamps',
    publish: arrowOf(
      withColumn(validSpec(), {
        name: 'str_observed_at',
        type: 'timestamp',
        unit: 'ns',
        values: [micros('2026-04-02T06:00:00Z') * 1000, micros('2026-04-03T06:00:00Z') * 1000],
      }),
    ),
    reason: /nano|\bns\b/i,
  },
  {
    dataset: 'wssi_us/demand_shock',
    fault: 'missing pitcache.series_key',
    publish: { bytes: withoutMetadata(validSpec({ region_id: 'PJM', region_type: 'iso' })) },
    reason: /series_key/,
  },
  {
    dataset: 'wrsi/forecast_stress',
    fault: 'pitcache.series_key not JSON',
    publish: arrowOf({ ...validSpec({ geography: 'US', region_type: 'state' }), metadata: { 'pitcache.series_key': 'geography,region_type' } }),
    reason: /series_key/,
  },
  {
    dataset: 'glmi/marginality',
    fault: 'filter column not in the series key',
    publish: arrowOf({ ...validSpec({ basin: 'atlantic' }), seriesKey: [] }),
    reason: /basin/,
  },
  {
    dataset: 'pemi/grid_stress',
    fault: 'manifest not JSON',
    publish: { bytes: bytesOf(validSpec({ bidding_zone: 'FR' })), manifestText: '{"format": "pitcache-snapshot/1", ' },
    reason: /manifest/i,
  },
];

const FAULTS_B: Fault[] = [
  {
    dataset: 'gbsi_us/system_stress',
    fault: 'manifest without sha256',
    publish: { bytes: bytesOf(validSpec()), manifest: { sha256: undefined } },
    reason: /sha256/,
  },
  {
    dataset: 'gbsi_us/balance_momentum',
    fault: 'series key names a column not in the schema',
    publish: arrowOf({ ...validSpec(), seriesKey: ['region'] }),
    reason: /region/,
  },
  {
    dataset: 'gbsi_us/storage_surprise',
    fault: 'series-key column of type Float64',
    publish: arrowOf({ ...validSpec(), seriesKey: ['value'] }),
    reason: /value/,
  },
  {
    dataset: 'gbsi_us/backtest_summary',
    fault: 'object is not Arrow IPC',
    publish: { bytes: new TextEncoder().encode('date,value\n2026-04-01,1\n') },
    reason: /arrow/i,
  },
  {
    dataset: 'wssi_us/demand_shock',
    fault: 'str_effective_at as Utf8',
    publish: arrowOf(
      withColumn(validSpec({ region_id: 'PJM', region_type: 'iso' }), { name: 'str_effective_at', type: 'utf8', values: ['2026-04-02', '2026-04-03'] }),
    ),
    reason: /str_effective_at/,
  },
  {
    dataset: 'wrsi/forecast_stress',
    fault: 'pitcache.series_key not an array',
    publish: arrowOf({ ...validSpec({ geography: 'US', region_type: 'state' }), metadata: { 'pitcache.series_key': '{"geography":1}' } }),
    reason: /series_key/,
  },
  { dataset: 'glmi/marginality', fault: 'filter column missing from the snapshot', publish: arrowOf(validSpec()), reason: /basin/ },
  {
    dataset: 'pemi/grid_stress',
    fault: 'model_version as Float64',
    publish: arrowOf(withColumn(validSpec({ bidding_zone: 'FR' }), { name: 'model_version', type: 'float64', values: [1, 1] })),
    reason: /model_version/,
  },
];

/** Every string value of the status entry that names `id`, other than `id` itself: its reason. */
function reasonFor(readyz: unknown, id: string): string | null {
  const visit = (v: unknown): Record<string, unknown> | null => {
    if (Array.isArray(v)) {
      for (const x of v) {
        const hit = visit(x);
        if (hit !== null) return hit;
      }
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      if (Object.values(o).includes(id)) return o;
      for (const x of Object.values(o)) {
        const hit = visit(x);
        if (hit !== null) return hit;
      }
    }
    return null;
  };
  const entry = visit(readyz);
  if (entry === null) return null;
  return Object.values(entry)
    .filter((x): x is string => typeof x === 'string' && x !== id)
    .join(' | ');
}

/**
 * /readyz needs no key: it says a dataset's state, generation and rows, and no reason (a
 * source's error names buckets, endpoints and paths; /admin/status has it).
 */
function expectStateOnly(readyz: unknown, id: string, state: string): void {
  const entry = (readyz as { datasets: Array<Record<string, unknown>> }).datasets.find((d) => d['dataset'] === id);
  expect(entry).toEqual({ dataset: id, state, generation: null, rows: null });
}

for (const [name, faults, format] of [
  ['file format good dataset', FAULTS_A, 'file'],
  ['stream format good dataset', FAULTS_B, 'stream'],
] as const) {
  describe(`contract 6: snapshots refused at load (${name})`, () => {
    let h: Harness;

    beforeAll(async () => {
      h = await startInProcessHarness({
        datasets: [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: validSpec({ country: 'DE' }), format }],
        prepare: async (dir) => {
          for (const f of faults) {
            const [productId, dataset] = f.dataset.split('/') as [string, string];
            await publish(dir, productId, dataset, f.publish);
          }
        },
      });
    });
    afterAll(() => h.close());

    it.each(faults)('$fault: $dataset answers 503, /readyz says its state and /admin/status its reason', async (f) => {
      expectError(await h.get(`/${f.dataset}`), 503, 'dataset_unavailable', undefined);
      const ready = await h.get('/readyz', null);
      expect(ready.status).toBe(200);
      expectStateOnly(ready.body, f.dataset, 'refused');
      const status = await h.get('/admin/status', ADMIN_KEY);
      const reason = reasonFor(status.body, f.dataset);
      expect(reason, `no /admin/status entry names ${f.dataset}: ${status.text}`).not.toBeNull();
      expect(reason).toMatch(f.reason);
    });

    it('the other dataset serves (contract 6: the IPC file and stream formats are both accepted)', async () => {
      const r = await h.get('/gbsi_eu/system_stress?latest=false');
      expect(rowsOf(r).map((row) => [row['date'], row['country'], row['value']])).toEqual([
        ['2026-04-01', 'DE', 1],
        ['2026-04-02', 'DE', 2],
      ]);
    });

    it('contract 8: /healthz and /readyz answer 200 without a key once loading is over', async () => {
      expect((await h.get('/healthz', null)).status).toBe(200);
      expect((await h.get('/readyz', null)).status).toBe(200);
    });
  });
}

describe('contract 6/8: a manifest that names a missing object', () => {
  let h: Harness;
  /** start-up sleeps the server asked for (simulated: each advances the clock and fires at once) */
  const sleeps: number[] = [];

  beforeAll(async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 20, 12, 0, 0));
    h = await startInProcessHarness({
      datasets: [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: validSpec({ country: 'DE' }) }],
      clock,
      prepare: (dir) => publish(dir, 'glmi', 'marginality', { bytes: bytesOf(validSpec({ basin: 'atlantic' })), writeObject: false }),
      server: {
        timers: {
          setTimeout: (cb: () => void, ms: number) => {
            sleeps.push(ms);
            clock.advance(ms);
            return setImmediate(cb);
          },
          clearTimeout: (t: unknown) => clearImmediate(t as NodeJS.Immediate),
        },
      },
    });
  });
  afterAll(() => h.close());

  it('the dataset answers 503, /readyz says its state and /admin/status its reason; the other dataset serves', async () => {
    expectError(await h.get('/glmi/marginality'), 503, 'dataset_unavailable', undefined);
    const ready = await h.get('/readyz', null);
    expect(ready.status).toBe(200);
    expectStateOnly(ready.body, 'glmi/marginality', 'refused');
    expect(reasonFor((await h.get('/admin/status', ADMIN_KEY)).body, 'glmi/marginality')).toMatch(/00000001\.arrow|object|ENOENT|missing/i);
    expect(rowsOf(await h.get('/gbsi_eu/system_stress')).length).toBe(1);
  });

  it('contract 8: start-up is ready once every dataset has been tried; a missing object is not retried like an unreachable source', () => {
    expect(sleeps).toEqual([]);
  });
});
