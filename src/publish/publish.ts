import type { AsyncBuffer } from 'hyparquet';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { catalogInForce } from '../catalog/catalog-source.js';
import { readManifest } from '../snapshot/read-manifest.js';
import { objectPath, partsOf, type Manifest, type PartRef } from '../snapshot/manifest.js';
import { decodeArrowColumn } from '../store/arrow-column.js';
import { readArrowSnapshot } from '../store/decode-arrow.js';
import { sha256Hex } from '../store/snapshot-to-table.js';
import { formatIsoMillis } from '../time/instant.js';
import { arrowBatchInput, conformTable, type BatchInput } from './arrow-input.js';
import { buildSnapshotParts, DEFAULT_PART_BYTES, type IngestedRewrite, type PartSink, type Source } from './build-snapshot.js';
import type { ChunkedTable } from './chunked-table.js';
import { dropped } from './collect-garbage.js';
import { commitGeneration, type PartDigest } from './commit-generation.js';
import { csvBatchInput, csvFileText, csvStringText } from './csv-batches.js';
import { makeSchema, readArrowSchema, type DatasetSchema } from './dataset-schema.js';
import { parquetBatchInput } from './parquet-input.js';
import { planVersions } from './plan-versions.js';
import { emptyTable, TableAccumulator } from './table-accumulator.js';
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
 *
 * Memory (contract 14): the stored generation's columns, the input's columns and one batch
 * per input being read, then one part of output at a time: inputs and stored parts are read a
 * batch or a part at a time into typed columns kept as read (table-accumulator.ts), versions
 * are planned a range of series at a time (plan-versions.ts), and parts are gathered, ordered
 * and written one at a time, twice (below; docs/decisions.md#publish-in-bounded-memory).
 */
export type PublishInput = (
  | { readonly format: 'arrow'; readonly bytes: Uint8Array }
  | { readonly format: 'arrow'; readonly path: string }
  | { readonly format: 'csv'; readonly text: string }
  | { readonly format: 'csv'; readonly path: string }
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

  let sources: Source[];
  let rewrites: IngestedRewrite | null = null;
  let counts = { added: 0, newKeys: 0, rewritten: 0, shadowed: 0 };
  if (req.replace) {
    sources = [{ table: input, picked: null }];
  } else {
    const plan = planVersions(current, input, { rebuild: req.rebuild, publishedAtUs: req.publishedAtUs });
    if (plan.appendedCount === 0 && plan.rewritten === 0 && stored !== null) {
      return { status: 'unchanged', generation: stored.manifest.generation, rows: stored.manifest.rows };
    }
    sources =
      current === null
        ? [{ table: input, picked: plan.appended }]
        : [
            { table: current, picked: null },
            { table: input, picked: plan.appended },
          ];
    rewrites = plan.ingestedRewrites;
    counts = { added: plan.appendedCount, newKeys: plan.newKeys, rewritten: plan.rewritten, shadowed: plan.shadowed };
  }

  // The output is made once to learn its objects' digests (the manifest names them, and a
  // publish equal to the stored generation writes nothing), then again as it is written. A
  // generation of one part keeps it from the first time; of more, no part is kept.
  const build = (sink: PartSink): Promise<void> => buildSnapshotParts(schema, sources, rewrites, req.partBytes ?? DEFAULT_PART_BYTES, sink);
  const digests: PartDigest[] = [];
  let kept: Uint8Array | null = null;
  await build(async (bytes, rows, last) => {
    // What the server will do with it, before anyone can see it.
    const held = readArrowSnapshot(bytes).rows;
    if (held !== rows) throw new Error(`a written part holds ${held} rows, ${rows} were meant`);
    digests.push({ sha256: sha256Hex(bytes), rows, bytes: bytes.byteLength });
    if (last && digests.length === 1) kept = bytes;
  });
  if (stored !== null && sameObjects(digests, partsOf(stored.manifest))) {
    return { status: 'unchanged', generation: stored.manifest.generation, rows: stored.manifest.rows };
  }
  const only: Uint8Array | null = kept;
  const remake = async (put: (bytes: Uint8Array) => Promise<void>): Promise<void> => {
    if (only !== null) await put(only);
    else await build((bytes) => put(bytes));
  };
  const committed = await commitGeneration(req.source, {
    ...ref,
    parts: digests,
    remake,
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

/**
 * The stored generation, part by part: each read, checked against its sha256 and the first
 * part's schema (contract 14), decoded and dropped before the next is read.
 */
async function readStored(source: SnapshotSource, ref: { productId: string; dataset: string }, manifest: Manifest): Promise<ChunkedTable> {
  let acc: TableAccumulator | null = null;
  let schemaText = '';
  let first = '';
  for (const part of partsOf(manifest)) {
    const path = objectPath(ref.productId, ref.dataset, part.object);
    let bytes: Uint8Array | null = await source.readObject(path);
    if (sha256Hex(bytes) !== part.sha256) {
      throw new Error(`the current snapshot ${path} does not match its manifest's sha256: fix the dataset before publishing on top of it`);
    }
    try {
      const snap = readArrowSnapshot(bytes);
      if (acc === null) {
        const info = readArrowSchema(bytes);
        acc = new TableAccumulator(makeSchema(info.columns, snap.seriesKey, info.metadata));
        schemaText = snap.schemaText;
        first = path;
      } else if (snap.schemaText !== schemaText) {
        throw new Error(`${path} has another schema than ${first}: every part of a generation has the same schema`);
      }
      acc.append({ schema: acc.schema, rows: snap.rows, columns: snap.columns.map((c) => decodeArrowColumn(c, null)) });
    } catch (e) {
      throw new Error(
        `the current snapshot ${partsOf(manifest)
          .map((p) => objectPath(ref.productId, ref.dataset, p.object))
          .join(', ')} is refused: ${(e as Error).message}`,
      );
    }
    dropped(bytes.byteLength);
    bytes = null;
  }
  return acc!.finish();
}

/**
 * Every input file -> one table in the dataset's schema (the current generation's, else the
 * first file's), files one after the other in the order given, each read a batch at a time.
 */
async function readInputs(req: PublishRequest, current: ChunkedTable | null): Promise<ChunkedTable> {
  const inputs: readonly PublishInput[] = Array.isArray(req.input) ? req.input : [req.input as PublishInput];
  if (inputs.length === 0) throw new Error('the input folder holds no .arrow, .csv or .parquet file');
  let acc: TableAccumulator | null = current === null ? null : new TableAccumulator(current.schema);
  for (const input of inputs) {
    const what = inputs.length === 1 ? 'the input' : (input.name ?? 'an input');
    const schema = acc?.schema ?? null;
    const opened = await openInput(req, input, schema, what);
    try {
      acc ??= new TableAccumulator(opened.schema);
      const target = acc.schema;
      if (input.format === 'csv') {
        for await (const batch of opened.batches()) acc.append(batch);
        continue;
      }
      // The schema is conformed before any batch: an input of no rows is checked too.
      conformTable(emptyTable(opened.schema), target, what);
      const batches = opened.batches();
      for (;;) {
        let next: IteratorResult<VersionTable>;
        try {
          next = await batches.next();
        } catch (e) {
          throw refused(e, what);
        }
        if (next.done === true) break;
        acc.append(conformTable(next.value, target, what));
      }
    } finally {
      await opened.close();
    }
  }
  return acc!.finish();
}

async function openInput(req: PublishRequest, input: PublishInput, schema: DatasetSchema | null, what: string): Promise<BatchInput> {
  const seriesKey = schema?.seriesKey ?? req.seriesKey ?? [];
  if (input.format === 'csv') return csvBatchInput('text' in input ? csvStringText(input.text) : csvFileText(input.path), schema, seriesKey);
  let opened: BatchInput;
  try {
    if (input.format === 'parquet') opened = await parquetBatchInput(input.file, input.name ?? 'the input', seriesKey);
    else opened = await arrowBatchInput('bytes' in input ? input.bytes : input.path, seriesKey);
  } catch (e) {
    throw refused(e, what);
  }
  if (schema === null && req.seriesKey !== null && !sameKey(req.seriesKey, opened.schema.seriesKey)) {
    await opened.close();
    throw new Error(`--series-key ${req.seriesKey.join(',')} differs from the series key ${what} declares (${opened.schema.seriesKey.join(',')})`);
  }
  return opened;
}

/** The same bytes as the stored generation's objects, part for part. */
function sameObjects(parts: readonly PartDigest[], stored: readonly PartRef[]): boolean {
  return parts.length === stored.length && parts.every((p, i) => p.sha256 === stored[i]!.sha256);
}

function refused(e: unknown, what: string): Error {
  const message = (e as Error).message;
  return new Error(message.startsWith(`${what} is refused: `) ? message : `${what} is refused: ${message}`);
}

function sameKey(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}
