import type { SnapshotSource } from '../source/snapshot-source.js';
import { findProduct, isNamedDataset } from '../catalog/products.js';
import { readManifest } from '../snapshot/read-manifest.js';
import { MANIFEST_FORMAT, objectPath, partsOf, type Manifest } from '../snapshot/manifest.js';
import { sha256Hex } from '../store/snapshot-to-table.js';
import { decodeArrowSnapshot } from '../store/decode-arrow.js';
import { formatIsoMillis } from '../time/instant.js';
import { conformTable, decodeArrowParts, decodeArrowTable } from './arrow-input.js';
import { buildSnapshot, type Segment } from './build-snapshot.js';
import { commitGeneration } from './commit-generation.js';
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
export type PublishInput = { readonly format: 'arrow'; readonly bytes: Uint8Array } | { readonly format: 'csv'; readonly text: string };

export interface PublishRequest {
  readonly source: SnapshotSource;
  readonly productId: string;
  readonly dataset: string;
  readonly input: PublishInput;
  readonly rebuild: boolean;
  readonly replace: boolean;
  /** series key for a first publish; when given with a stored dataset it must match it */
  readonly seriesKey: readonly string[] | null;
  /** the publish time in µs (injected: tests fix it) */
  readonly publishedAtUs: number;
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
  const product = findProduct(req.productId);
  if (product === undefined || !isNamedDataset(req.productId, req.dataset)) {
    throw new Error(`${req.productId}/${req.dataset} is not a dataset of the API`);
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
  const input = readInput(req, current);
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

  const bytes = buildSnapshot(schema, segments, rewrites);
  if (stored !== null && stored.manifest.format === MANIFEST_FORMAT && sha256Hex(bytes) === stored.manifest.sha256) {
    return { status: 'unchanged', generation: stored.manifest.generation, rows: stored.manifest.rows };
  }
  // What the server will do with it, before anyone can see it.
  const rows = decodeArrowSnapshot(bytes).rows;
  const committed = await commitGeneration(req.source, {
    ...ref,
    bytes,
    rows,
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

function readInput(req: PublishRequest, current: VersionTable | null): VersionTable {
  const seriesKey = current?.schema.seriesKey ?? req.seriesKey ?? [];
  if (req.input.format === 'csv') return csvTable(parseCsv(req.input.text), current?.schema ?? null, seriesKey);
  let table: VersionTable;
  try {
    table = decodeArrowTable(req.input.bytes, seriesKey);
  } catch (e) {
    throw new Error(`the input is refused: ${(e as Error).message}`);
  }
  if (current !== null) return conformTable(table, current.schema, 'the input');
  if (req.seriesKey !== null && !sameKey(req.seriesKey, table.schema.seriesKey)) {
    throw new Error(`--series-key ${req.seriesKey.join(',')} differs from the series key the input declares (${table.schema.seriesKey.join(',')})`);
  }
  return table;
}

function sameKey(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}
