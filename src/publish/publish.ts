import type { AsyncBuffer } from 'hyparquet';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { catalogInForce } from '../catalog/catalog-source.js';
import { readManifest } from '../snapshot/read-manifest.js';
import { objectPath, partsOf, type Manifest, type PartRef } from '../snapshot/manifest.js';
import { sha256Hex } from '../store/snapshot-to-table.js';
import { decodeArrowSnapshot } from '../store/decode-arrow.js';
import { formatIsoMillis } from '../time/instant.js';
import { conformTable, decodeArrowParts, decodeArrowTable } from './arrow-input.js';
import { buildSnapshotParts, DEFAULT_PART_BYTES, type Segment } from './build-snapshot.js';
import { commitGeneration } from './commit-generation.js';
import { concatTables } from './concat-tables.js';
import type { DatasetSchema } from './dataset-schema.js';
import { parquetToArrow } from './parquet-input.js';
import { csvTable } from './csv-input.js';
import { parseCsv } from './csv-parse.js';
import { planVersions } from './plan-versions.js';
import type { VersionTable } from './version-table.js';

/**
 * `pitcache publish`: recomputed rows -> the next generation of a dataset.
 *
 * Default (a recomputation): the stored versions all stay; input rows that revise their
 * key's current version are appended (plan-versions.ts); identical rows add nothing, and a
 * publish that changes nothing writes nothing (no new generation: a generation is a change
 * of data, and readers then keep their cursors).
 *
 * `replace` (a rollback): the input's rows, every version it holds, ARE the new generation.
 * Rolling back = `--replace --input <an older snapshots/NNNNNNNN.arrow of the dataset>`:
 * the old rows are served again, as a new generation number (generations only go up, so
 * servers and cursors see an ordinary change).
 */
export type PublishInput = (
  | { readonly format: 'arrow'; readonly bytes: Uint8Array }
  | { readonly format: 'csv'; readonly text: string }
  | { readonly format: 'parquet'; readonly file: AsyncBuffer }
) & {
  /** for messages: the file's name */
  readonly name?: string;
};

export interface PublishRequest {
  readonly source: SnapshotSource;
  readonly productId: string;
  readonly dataset: string;
  /** one file, or the files of an `--input` folder in name order */
  readonly input: PublishInput | readonly PublishInput[];
  readonly rebuild: boolean;
  readonly replace: boolean;
  /** series key for a first publish; when given with a stored dataset it must match it */
  readonly seriesKey: readonly string[] | null;
  /** the publish time in µs (injected: tests fix it) */
  readonly publishedAtUs: number;
  /** the most bytes of one part of the output (contract 14); default DEFAULT_PART_BYTES */
  readonly partBytes?: number;
  readonly beforeManifestWrite?: () => Promise<void>;
}

export type PublishResult =
  | {
      readonly status: 'published';
      readonly mode: 'recompute' | 'replace';
      readonly manifest: Manifest;
      readonly previousGeneration: number | null;
      /** versions appended (first versions of new keys included); 0 for replace */
      readonly added: number;
      readonly newKeys: number;
      /** current versions whose str_ingested_at a --rebuild rewrote */
      readonly rewritten: number;
      readonly shadowed: number;
      /** false when the store did not enforce the conditional write (checked after instead) */
      readonly enforced: boolean;
    }
  | { readonly status: 'unchanged'; readonly generation: number; readonly rows: number };

export async function publish(req: PublishRequest): Promise<PublishResult> {
  // The catalog in force at the source names what may be published (contract 13).
  const { catalog } = await catalogInForce(req.source);
  const product = catalog.product(req.productId);
  if (product === undefined || !catalog.has(req.productId, req.dataset)) {
    const known =
      product === undefined
        ? `its products: ${catalog.products.map((p) => p.id).join(', ')}`
        : `${product.id}'s datasets: ${product.datasets.map((d) => d.name).join(', ')}`;
    throw new Error(
      `${req.productId}/${req.dataset} is not a dataset of the catalog in force at ${req.source.description} (${known}); add it first: pitcache catalog --source <source> > catalog.json, add ${product === undefined ? `a product "${req.productId}" with the dataset` : `{"name": "${req.dataset}", "description": "..."} to the datasets of "${req.productId}"`}, then pitcache catalog --source <source> --set catalog.json`,
    );
  }
  const ref = { productId: req.productId, dataset: req.dataset };
  const check = await readManifest(req.source, ref, null);
  if (check.status === 'unchanged') throw new Error('unexpected conditional read result');
  const stored = check.status === 'ok' ? { manifest: check.manifest, etag: check.etag, table: await readStored(req.source, ref, check.manifest) } : null;
  const current = stored?.table ?? null;

  if (current !== null && req.seriesKey !== null && !sameKey(req.seriesKey, current.schema.seriesKey)) {
    throw new Error(
      `--series-key ${req.seriesKey.join(',')} differs from the dataset's series key ${current.schema.seriesKey.join(',')}: it only sets the key of a first publish`,
    );
  }
  const input = await readInputs(req, current);
  const schema = current?.schema ?? input.schema;
  for (const f of product.filters) {
    if (!schema.seriesKey.includes(f.param)) {
      throw new Error(
        `${req.productId} filters on "${f.param}", so the series key must include it (it is ${JSON.stringify(schema.seriesKey)}; see --series-key)`,
      );
    }
  }

  let segments: Segment[];
  let rewrites: ReadonlyMap<number, number> = new Map();
  let counts = { added: 0, newKeys: 0, rewritten: 0, shadowed: 0 };
  if (req.replace) {
    segments = [{ table: input, rows: null }];
  } else {
    const plan = planVersions(current, input, { rebuild: req.rebuild, publishedAtUs: req.publishedAtUs });
    if (plan.appended.length === 0 && plan.ingestedRewrites.size === 0 && stored !== null) {
      return { status: 'unchanged', generation: stored.manifest.generation, rows: stored.manifest.rows };
    }
    segments =
      current === null
        ? [{ table: input, rows: plan.appended }]
        : [
            { table: current, rows: null },
            { table: input, rows: plan.appended },
          ];
    rewrites = plan.ingestedRewrites;
    counts = { added: plan.appended.length, newKeys: plan.newKeys, rewritten: plan.ingestedRewrites.size, shadowed: plan.shadowed };
  }

  const parts = buildSnapshotParts(schema, segments, rewrites, req.partBytes ?? DEFAULT_PART_BYTES);
  if (stored !== null && sameObjects(parts, partsOf(stored.manifest))) {
    return { status: 'unchanged', generation: stored.manifest.generation, rows: stored.manifest.rows };
  }
  const committed = await commitGeneration(req.source, {
    ...ref,
    // What the server will do with them, before anyone can see them.
    parts: parts.map((bytes) => ({ bytes, rows: decodeArrowSnapshot(bytes).rows })),
    generation: (stored?.manifest.generation ?? 0) + 1,
    createdAt: formatIsoMillis(req.publishedAtUs),
    expectedEtag: stored?.etag ?? null,
    ...(req.beforeManifestWrite === undefined ? {} : { beforeManifestWrite: req.beforeManifestWrite }),
  });
  return {
    status: 'published',
    mode: req.replace ? 'replace' : 'recompute',
    manifest: committed.manifest,
    previousGeneration: stored?.manifest.generation ?? null,
    ...counts,
    enforced: committed.enforced,
  };
}

async function readStored(source: SnapshotSource, ref: { productId: string; dataset: string }, manifest: Manifest): Promise<VersionTable> {
  const parts: Uint8Array[] = [];
  const paths: string[] = [];
  for (const part of partsOf(manifest)) {
    const path = objectPath(ref.productId, ref.dataset, part.object);
    const bytes = await source.readObject(path);
    if (sha256Hex(bytes) !== part.sha256) {
      throw new Error(`the current snapshot ${path} does not match its manifest's sha256: fix the dataset before publishing on top of it`);
    }
    parts.push(bytes);
    paths.push(path);
  }
  try {
    return parts.length === 1 ? decodeArrowTable(parts[0]!, []) : decodeArrowParts(parts, paths);
  } catch (e) {
    throw new Error(`the current snapshot ${paths.join(', ')} is refused: ${(e as Error).message}`);
  }
}

/**
 * Every input file -> one table in the dataset's schema (the current generation's, else the
 * first file's), files one after the other in the order given.
 */
async function readInputs(req: PublishRequest, current: VersionTable | null): Promise<VersionTable> {
  const inputs: readonly PublishInput[] = Array.isArray(req.input) ? req.input : [req.input as PublishInput];
  if (inputs.length === 0) throw new Error('the input folder holds no .arrow, .csv or .parquet file');
  const tables: VersionTable[] = [];
  for (const input of inputs) {
    const schema = current?.schema ?? tables[0]?.schema ?? null;
    const table = await readInput(req, input, schema, inputs.length === 1 ? 'the input' : (input.name ?? 'an input'), input.name ?? 'the input');
    tables.push(table);
  }
  return concatTables(tables);
}

async function readInput(req: PublishRequest, input: PublishInput, schema: DatasetSchema | null, what: string, file: string): Promise<VersionTable> {
  const seriesKey = schema?.seriesKey ?? req.seriesKey ?? [];
  if (input.format === 'csv') {
    const table = csvTable(parseCsv(input.text), schema, seriesKey);
    return schema === null ? table : { ...table, schema };
  }
  let table: VersionTable;
  try {
    const bytes = input.format === 'parquet' ? (await parquetToArrow(input.file, file, seriesKey)).bytes : input.bytes;
    table = decodeArrowTable(bytes, seriesKey);
  } catch (e) {
    throw new Error(`${what} is refused: ${(e as Error).message}`);
  }
  if (schema !== null) return conformTable(table, schema, what);
  if (req.seriesKey !== null && !sameKey(req.seriesKey, table.schema.seriesKey)) {
    throw new Error(`--series-key ${req.seriesKey.join(',')} differs from the series key ${what} declares (${table.schema.seriesKey.join(',')})`);
  }
  return table;
}

/** The same bytes as the stored generation's objects, part for part. */
function sameObjects(parts: readonly Uint8Array[], stored: readonly PartRef[]): boolean {
  return parts.length === stored.length && parts.every((bytes, i) => sha256Hex(bytes) === stored[i]!.sha256);
}

function sameKey(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}
