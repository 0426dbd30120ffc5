import type { SnapshotSource } from '../source/snapshot-source.js';
import type { Catalog } from '../catalog/catalog.js';
import { DatasetSlot } from '../generations/dataset-slot.js';
import { loadGeneration } from '../generations/load-generation.js';
import { inlineBuilder } from '../generations/table-builder.js';
import { writeAnswerChain, type ChainSummary } from '../pipeline/answer-chain.js';
import { readManifest } from '../snapshot/read-manifest.js';
import type { Clock } from '../time/clock.js';
import type { Output } from '../publish/output.js';

/**
 * `pitcache asof`: the answer to an API query rebuilt from the stored files (spec section 1,
 * rule 5), with the server's own code all the way: the manifest and snapshot checks and
 * indexing (loadGeneration) into a slot as the server's, then the data endpoint's stages
 * and writers over the whole cursor chain (pipeline/answer-chain.ts, which says what each
 * format writes); pages are as large as the API allows.
 */
export interface AsOfRequest {
  readonly source: SnapshotSource;
  /** the catalog in force at the source (contract 13): it names the product, its filters and floor */
  readonly catalog: Catalog;
  readonly productId: string;
  readonly dataset: string;
  /** the API query string (undecoded), e.g. `as_of=2026-04-02&country=DE,FR` */
  readonly rawQuery: string;
  readonly format: 'json' | 'csv' | 'arrow';
  readonly out: Output;
  readonly clock: Clock;
}

export type AsOfSummary = ChainSummary;

export async function writeAsOfAnswer(req: AsOfRequest): Promise<AsOfSummary> {
  const product = req.catalog.product(req.productId);
  if (product === undefined) throw new Error(`unknown product ${req.productId}`);
  const slot = new DatasetSlot(product, req.dataset);
  const check = await readManifest(req.source, { productId: req.productId, dataset: req.dataset }, null);
  if (check.status !== 'ok') throw new Error(`${slot.id} has no manifest.json at ${req.source.description}`);
  const { generation } = await loadGeneration(req.source, slot, check.manifest, req.clock, inlineBuilder);
  slot.swap(generation);
  const query = req.rawQuery === '' ? `format=${req.format}` : `${req.rawQuery}&format=${req.format}`;
  return writeAnswerChain(slot, query, req.out);
}
