/**
 * `pitcache publish --input` from Arrow, CSV and Parquet (contract 14): the same rows as an
 * Arrow file, a CSV file and a folder of Parquet files written by DuckDB publish the same
 * generation, object for object; the output is cut at --part-bytes between series, never
 * inside one, into parts a real server loads and answers from exactly as from one object;
 * a recomputation on top of a generation of many parts reads every part.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { publishCommand } from '../src/cli/publish-command.js';
import { MemoryOutput } from '../src/publish/output.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { parseManifest, partsOf, type Manifest } from '../src/snapshot/manifest.js';
import { ManualClock } from '../src/time/clock.js';
import { startHarness } from './support/harness.js';
import { Rng } from './support/random-snapshot.js';

const PRODUCT = 'pemi';
const DATASET = 'grid_stress';
const ZONES = ['DE-LU', 'FR', 'NL', 'NO2', 'SE3', 'dk1', 'é1', 'Ａz', '😀x', 'IT-NORD', 'AT', 'BE', 'CH', 'CZ', 'PL', 'ES', 'PT', 'FI'];
const DAY0 = Date.UTC(2026, 0, 1) / 86_400_000;

interface Row {
  day: number;
  effUs: number;
  obsUs: number;
  ingUs: number;
  zone: string;
  value: number | null;
  flag: boolean;
}

/** Versions of keys of 18 zones over 60 days, some keys revised. */
function makeRows(seed: number): Row[] {
  const rng = new Rng(seed);
  const rows: Row[] = [];
  for (const zone of ZONES) {
    for (let d = 0; d < 60; d++) {
      const day = DAY0 + d;
      const versions = rng.chance(0.2) ? 2 : 1;
      for (let v = 0; v < versions; v++) {
        const effUs = day * 86_400_000_000 + rng.int(0, 86_399) * 1_000_000;
        const obsUs = effUs + rng.int(1, 5_000_000) * 1000 + v * 3_600_000_000;
        rows.push({
          day,
          effUs,
          obsUs,
          ingUs: obsUs + rng.int(1, 999_999),
          zone,
          value: rng.chance(0.05) ? null : rng.int(-1e6, 1e6) / 64,
          flag: rng.chance(0.5),
        });
      }
    }
  }
  // Any order: publishing writes the server's order.
  return rows.sort(() => 0).reverse();
}

const iso = (us: number): string => new Date(Math.floor(us / 1000)).toISOString().replace('Z', '') + String(us % 1000).padStart(3, '0') + 'Z';

function arrowOf(rows: readonly Row[]): Uint8Array {
  return buildArrowSnapshot({
    seriesKey: ['bidding_zone'],
    columns: [
      { name: 'date', type: 'date32', values: rows.map((r) => r.day) },
      { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: rows.map((r) => r.effUs) },
      { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: rows.map((r) => r.obsUs) },
      { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: rows.map((r) => r.ingUs) },
      { name: 'model_version', type: 'utf8', values: rows.map(() => 'v1') },
      { name: 'bidding_zone', type: 'utf8', values: rows.map((r) => r.zone) },
      { name: 'value', type: 'float64', values: rows.map((r) => r.value) },
      { name: 'flag', type: 'bool', values: rows.map((r) => r.flag) },
    ],
  });
}

function csvOf(rows: readonly Row[]): string {
  const lines = ['date,str_effective_at,str_observed_at,str_ingested_at,model_version,bidding_zone,value,flag'];
  for (const r of rows) {
    const date = new Date(r.day * 86_400_000).toISOString().slice(0, 10);
    lines.push([date, iso(r.effUs), iso(r.obsUs), iso(r.ingUs), 'v1', r.zone, r.value === null ? '' : String(r.value), String(r.flag)].join(','));
  }
  return lines.join('\n') + '\n';
}

/** The rows as Parquet files written by DuckDB (one per slice of rows), the series key in their key-value metadata. */
async function parquetFolder(rows: readonly Row[], folder: string, files: number): Promise<void> {
  await mkdir(folder, { recursive: true });
  const raw = join(folder, 'raw.txt');
  await writeFile(raw, rows.map((r) => [r.day, r.effUs, r.obsUs, r.ingUs, r.zone, r.value ?? '', r.flag].join('\t')).join('\n') + '\n');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(
      `CREATE TABLE t AS SELECT row_number() OVER () AS n, DATE '1970-01-01' + day::INTEGER AS date, make_timestamp(eff) AS str_effective_at,
         make_timestamp(obs) AS str_observed_at, make_timestamp(ing) AS str_ingested_at, 'v1' AS model_version, zone AS bidding_zone,
         value::DOUBLE AS value, flag::BOOLEAN AS flag
       FROM read_csv('${raw}', delim='\t', header=false, quote='', nullstr='',
         columns={'day': 'BIGINT', 'eff': 'BIGINT', 'obs': 'BIGINT', 'ing': 'BIGINT', 'zone': 'VARCHAR', 'value': 'DOUBLE', 'flag': 'BOOLEAN'})`,
    );
    const per = Math.ceil(rows.length / files);
    for (let f = 0; f < files; f++) {
      await c.run(
        `COPY (SELECT * EXCLUDE (n) FROM t WHERE n > ${f * per} AND n <= ${(f + 1) * per} ORDER BY n) TO '${join(folder, `part-${f}.parquet`)}'
         (FORMAT parquet, ROW_GROUP_SIZE 500, COMPRESSION ${f % 2 === 0 ? 'zstd' : 'snappy'}, KV_METADATA {'pitcache.series_key': '["bidding_zone"]'})`,
      );
    }
  } finally {
    c.closeSync();
  }
  await rm(raw);
}

async function cli(source: string, input: string, ...extra: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const argv = ['--source', source, '--product', PRODUCT, '--dataset', DATASET, '--input', input, ...extra];
  const code = await publishCommand(argv, {}, io, new ManualClock(Date.UTC(2026, 4, 1)));
  return { code, out: io.stdout.text(), err: io.stderr.text() };
}

/** The generation as published: its manifest and the sha256 of every object it names. */
async function generation(dir: string): Promise<{ manifest: Manifest; objects: string[] }> {
  const folder = join(dir, PRODUCT, DATASET);
  const manifest = parseManifest(await readFile(join(folder, 'manifest.json')));
  const objects: string[] = [];
  for (const p of partsOf(manifest))
    objects.push(
      createHash('sha256')
        .update(await readFile(join(folder, p.object)))
        .digest('hex'),
    );
  return { manifest, objects };
}

describe('publish --input from Arrow, CSV and Parquet', () => {
  let tmp: string;
  const rows = makeRows(20_261_129);
  const PART_BYTES = '12KiB';

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'pitcache-inputs-'));
    await writeFile(join(tmp, 'in.arrow'), arrowOf(rows));
    await writeFile(join(tmp, 'in.csv'), csvOf(rows));
    await parquetFolder(rows, join(tmp, 'parquet'), 3);
  }, 60_000);
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('the same rows from an Arrow file, a CSV file and a folder of Parquet files are the same generation, object for object', async () => {
    const got = [];
    for (const input of ['in.arrow', 'in.csv', 'parquet']) {
      const dir = join(tmp, `out-${input}`);
      const r = await cli(dir, join(tmp, input), '--series-key', 'bidding_zone', '--replace', '--part-bytes', PART_BYTES);
      expect(r.err, input).toBe('');
      expect(r.code, input).toBe(0);
      expect(r.out).toMatch(new RegExp(`generation 1: ${rows.length} rows`));
      got.push(await generation(dir));
    }
    expect(got[0]!.manifest.format).toBe('pitcache-snapshot/2');
    expect(got[0]!.objects.length).toBeGreaterThan(3);
    expect(got[1]).toEqual(got[0]);
    expect(got[2]).toEqual(got[0]);
  });

  it('parts stay within --part-bytes, split between series only, and load into a server that answers as from one object', async () => {
    const one = join(tmp, 'one');
    expect((await cli(one, join(tmp, 'in.arrow'), '--series-key', 'bidding_zone', '--replace')).code).toBe(0);
    expect((await generation(one)).manifest.format).toBe('pitcache-snapshot/1');
    const many = join(tmp, 'out-in.arrow');
    const { manifest } = await generation(many);
    const zonesSeen = new Set<string>();
    for (const p of partsOf(manifest)) {
      const bytes = await readFile(join(many, PRODUCT, DATASET, p.object));
      expect(bytes.byteLength).toBeLessThanOrEqual(12 * 1024);
      const { tableFromIPC } = await import('apache-arrow');
      const zones = new Set(tableFromIPC(bytes).getChild('bidding_zone')!.toArray() as string[]);
      for (const z of zones) {
        expect(zonesSeen.has(z), `series ${z} in two parts`).toBe(false);
        zonesSeen.add(z);
      }
    }
    expect(zonesSeen.size).toBe(ZONES.length);
    const answers = [];
    for (const dir of [one, many]) {
      const h = await startHarness({ datasets: [], server: { source: new LocalSource(dir) } });
      try {
        const r = await h.get(`/${PRODUCT}/${DATASET}?latest=false&limit=10000&format=csv`);
        expect(r.status, r.text).toBe(200);
        answers.push(r.text);
      } finally {
        await h.close();
      }
    }
    expect(answers[1]).toBe(answers[0]);
    expect(answers[0]!.split('\n').length).toBeGreaterThan(ZONES.length * 60);
  });

  it('a recomputation on top of a generation of many parts reads every part; the same input again publishes nothing', async () => {
    const dir = join(tmp, 'out-in.csv');
    // A recomputation: one row per key (its current version), every 7th with another value.
    const current = new Map<string, Row>();
    for (const r of rows) if ((current.get(`${r.zone}/${r.day}`)?.obsUs ?? -Infinity) < r.obsUs) current.set(`${r.zone}/${r.day}`, r);
    const seen = current;
    const revised = [...current.values()].map((r, i) =>
      i % 7 === 0 ? { ...r, value: (r.value ?? 0) + 1, obsUs: r.obsUs + 86_400_000_000, ingUs: r.ingUs + 86_400_000_000 } : r,
    );
    const path = join(tmp, 'revised.arrow');
    await writeFile(path, arrowOf(revised));
    const r = await cli(dir, path, '--part-bytes', PART_BYTES);
    expect(r.err).toBe('');
    expect(r.out).toMatch(new RegExp(`generation 2: \\d+ rows, ${Math.ceil(seen.size / 7)} versions added`));
    const g2 = await generation(dir);
    expect(g2.manifest.generation).toBe(2);
    expect(g2.manifest.rows).toBeGreaterThan(rows.length);
    const again = await cli(dir, path, '--part-bytes', PART_BYTES);
    expect(again.out).toMatch(/no changes: .* stays at generation 2/);
    expect(await readdir(join(dir, PRODUCT, DATASET, 'history'))).toEqual(['00000001.json', '00000002.json']);
  });

  it('refuses a Parquet column contract 6 has no type for, naming the file and the column', async () => {
    const folder = join(tmp, 'decimal');
    await mkdir(folder);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(
      `COPY (SELECT DATE '2026-01-01' AS date, TIMESTAMP '2026-01-01' AS str_effective_at, TIMESTAMP '2026-01-01' AS str_observed_at,
         TIMESTAMP '2026-01-01' AS str_ingested_at, 'v1' AS model_version, 'FR' AS bidding_zone, 1.5::DECIMAL(10,2) AS value)
       TO '${join(folder, 'x.parquet')}' (FORMAT parquet)`,
    );
    c.closeSync();
    const r = await cli(join(tmp, 'out-decimal'), join(folder, 'x.parquet'), '--series-key', 'bidding_zone');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/x\.parquet.*column "value" is DECIMAL/);
  });

  it('refuses a Parquet file whose row group cannot be decoded at once (no hang), and publishes nothing', async () => {
    const folder = join(tmp, 'corrupt');
    await mkdir(folder);
    const file = join(folder, 'x.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(
      `COPY (SELECT DATE '2026-01-01' + (i % 50)::INT AS date, TIMESTAMP '2026-01-01' + to_seconds(i) AS str_effective_at,
         TIMESTAMP '2026-01-01' + to_seconds(i + 1) AS str_observed_at, TIMESTAMP '2026-01-01' + to_seconds(i + 2) AS str_ingested_at,
         'v1' AS model_version, 'Z' || (i // 50)::VARCHAR AS bidding_zone, random() AS value
         FROM range(5000) t(i)) TO '${file}' (FORMAT parquet, COMPRESSION zstd)`,
    );
    c.closeSync();
    // The footer (at the end) stays whole, so the schema checks pass; the first column chunk's pages are overwritten.
    const bytes = await readFile(file);
    bytes.fill(0xff, 8, 2_000);
    await writeFile(file, bytes);
    const out = join(tmp, 'out-corrupt');
    const r = await cli(out, file, '--series-key', 'bidding_zone');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^pitcache publish: the input is refused: /);
    await expect(readFile(join(out, PRODUCT, DATASET, 'manifest.json'))).rejects.toThrow(/ENOENT/);
  });
});
