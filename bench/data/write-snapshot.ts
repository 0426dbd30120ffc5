/**
 * Streams one benchmark dataset into `<source>/<product>/<dataset>/snapshots/00000001.arrow`
 * (an Arrow IPC file, batch by batch) and writes its manifest last (contract 6).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RecordBatchFileWriter } from 'apache-arrow';
import { MANIFEST_FORMAT, manifestPath, manifestSchema, objectPath } from '../../src/snapshot/manifest.js';
import { generationObjectName } from '../../src/snapshot/write-generation.js';
import { compareUtf8 } from '../../src/store/string-dictionary.js';
import { formatIsoMicros } from '../../src/time/instant.js';
import { BatchBuilder, type BuilderSpec } from './batch-builder.js';
import { GENERATOR_VERSION, datasetIdOf, seriesKeyOf, type DatasetPlan } from './plan.js';
import { RowModel } from './row-model.js';

const BATCH_ROWS = 65_536;
/** Bytes the file stream may buffer before generation waits for the disk. */
const HIGH_WATER = 64 * 1024 * 1024;

export interface WrittenSnapshot {
  readonly id: string;
  readonly rows: number;
  readonly bytes: number;
  readonly sha256: string;
  /** relative to the source folder */
  readonly object: string;
  readonly generation: number;
}

export async function writeSnapshot(plan: DatasetPlan, sourceDir: string, generation = 1, createdAt?: string): Promise<WrittenSnapshot> {
  const def = plan.def;
  const model = new RowModel(plan);
  const keyCols = def.keyColumns;
  const hourWords = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0'));
  const specs: BuilderSpec[] = [
    { name: 'date', kind: 'date32' },
    def.effectiveType === 'date32' ? { name: 'str_effective_at', kind: 'date32' } : { name: 'str_effective_at', kind: 'timestamp', unit: def.timeUnit },
    { name: 'str_observed_at', kind: 'timestamp', unit: def.timeUnit },
    { name: 'str_ingested_at', kind: 'timestamp', unit: def.timeUnit },
    { name: 'model_version', kind: 'utf8' },
    // Key columns are always dictionary-coded here (the demo mixes both): 4 bytes a row
    // instead of a string, which keeps the 50M-row point within a single file's limits.
    ...keyCols.map((k, j): BuilderSpec => ({ name: k.name, kind: 'dict', words: [...new Set(plan.series.map((s) => s[j]!))] })),
    ...(plan.hourly ? [{ name: 'hour', kind: 'dict', words: hourWords } as const] : []),
    ...def.valueColumns.map((c, j): BuilderSpec => {
      if (c.type === 'dict-utf8') return { name: c.name, kind: 'dict', words: model.wordsOf(j) };
      return { name: c.name, kind: c.type };
    }),
  ];
  const metadata = new Map([
    ['pitcache.series_key', JSON.stringify(seriesKeyOf(plan))],
    ['pitcache.bench', GENERATOR_VERSION],
    ['pitcache.description', def.description],
  ]);
  const b = new BatchBuilder(specs, BATCH_ROWS, metadata);
  const cols = b.columns;
  const [date, eff, obs, ing, mv] = [cols[0]!, cols[1]!, cols[2]!, cols[3]!, cols[4]!];
  const keyBase = 5;
  const valueBase = keyBase + keyCols.length + (plan.hourly ? 1 : 0);
  // Codes of each series' key values, resolved once.
  const keyCodes = plan.series.map((s) => s.map((v, j) => (specs[keyBase + j] as { words: readonly string[] }).words.indexOf(v)));
  const valueCodes = def.valueColumns.map((c, j) =>
    c.type === 'dict-utf8' ? new Map((specs[valueBase + j] as { words: readonly string[] }).words.map((w, i) => [w, i])) : null,
  );

  const id = datasetIdOf(plan);
  const object = generationObjectName(generation);
  const target = join(sourceDir, objectPath(def.productId, def.dataset, object));
  await mkdir(dirname(target), { recursive: true });
  const out = createWriteStream(`${target}.tmp`);
  const hash = createHash('sha256');
  let bytes = 0;
  const writer = new RecordBatchFileWriter();
  const reader = writer.toNodeStream({ objectMode: false });
  reader.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    bytes += chunk.length;
    out.write(chunk);
  });
  const drained = new Promise<void>((done, fail) => {
    reader.on('end', done);
    reader.on('error', fail);
    out.on('error', fail);
  });

  // Rows go out in the order the server keeps them (series by key bytes, date, then
  // observed and ingested), so loading skips the sort and the reorder, as it does for
  // snapshots written by `pitcache publish`.
  const seriesOrder = plan.series.map((_, s) => s).sort((x, y) => compareKeys(plan.series[x]!, plan.series[y]!));
  let rows = 0;
  let keys = 0;
  for (const s of seriesOrder) {
    const codes = keyCodes[s]!;
    for (let h = 0; h < model.hours; h++) {
      for (let d = 0; d < model.days.length; d++) {
        const k = model.key(s, h, d);
        if (k === null) continue;
        for (const v of k.versions) {
          const i = b.rows++;
          date.num[i] = k.day;
          eff.num[i] = k.eff;
          obs.num[i] = v.obs;
          ing.num[i] = v.ing;
          mv.str[i] = '1.0';
          for (let j = 0; j < codes.length; j++) cols[keyBase + j]!.num[i] = codes[j]!;
          if (plan.hourly) cols[keyBase + codes.length]!.num[i] = k.hour;
          for (let j = 0; j < valueCodes.length; j++) setValue(cols[valueBase + j]!, i, v.values[j] ?? null, valueCodes[j] ?? null);
          rows++;
          if (b.full) writer.write(b.take());
        }
        // Now and then: let the byte queue move into the file stream, and wait if the disk lags.
        if (++keys % 4096 === 0) {
          await new Promise((r) => setImmediate(r));
          while (out.writableLength > HIGH_WATER) await new Promise<void>((r) => out.once('drain', () => r()));
        }
      }
    }
  }
  if (b.rows > 0 || rows === 0) writer.write(b.take());
  writer.finish();
  await drained;
  await new Promise<void>((done, fail) => out.end((e?: Error | null) => (e ? fail(e) : done())));
  await rename(`${target}.tmp`, target);

  const sha256 = hash.digest('hex');
  const manifest = manifestSchema.parse({
    format: MANIFEST_FORMAT,
    product_id: def.productId,
    dataset: def.dataset,
    generation,
    object,
    sha256,
    rows,
    created_at: createdAt ?? formatIsoMicros(plan.cutoffUs).replace(/\.\d+Z$/, 'Z'),
  });
  await writeFile(join(sourceDir, manifestPath(def.productId, def.dataset)), JSON.stringify(manifest, null, 2) + '\n');
  return { id, rows, bytes, sha256, object, generation };
}

/** Series-key tuples compared column by column in UTF-8 byte order (the contract's order). */
function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let j = 0; j < a.length; j++) {
    const c = compareUtf8(a[j]!, b[j]!);
    if (c !== 0) return c;
  }
  return 0;
}

function setValue(
  c: { num: Float64Array; str: (string | null)[]; spec: BuilderSpec },
  i: number,
  v: string | number | boolean | null,
  codes: Map<string, number> | null,
): void {
  switch (c.spec.kind) {
    case 'utf8':
      c.str[i] = v === null ? null : String(v);
      return;
    case 'dict':
      c.num[i] = v === null ? -1 : (codes!.get(String(v)) ?? -1);
      return;
    case 'bool':
      c.num[i] = v === null ? 2 : v ? 1 : 0;
      return;
    default:
      c.num[i] = typeof v === 'number' ? v : NaN;
  }
}
