/**
 * The pipeline stages of one build, loaded from its `dist/` (ROOT/dist/src/...), so that two
 * builds can be measured in one process in alternating rounds (bench/bulk/bulk-stages.ts):
 * the bench's own code is this build's, the stages are the named build's. Only modules and
 * exports that every build since the (date, series) order has are used.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/* eslint-disable @typescript-eslint/no-explicit-any -- another build's modules, typed at their use */
type AnyCtor = new (...args: any[]) => any;
type AnyFn = (...args: any[]) => any;

export interface PipelineKit {
  readonly root: string;
  readonly DatasetSlot: AnyCtor;
  readonly loadGeneration: AnyFn;
  readonly inlineBuilder: unknown;
  readonly readManifest: AnyFn;
  readonly LocalSource: AnyCtor;
  readonly findProduct: AnyFn;
  readonly systemClock: unknown;
  readonly Pinned: AnyCtor;
  readonly pinRequest: AnyFn;
  readonly PageResolver: AnyCtor;
  readonly WalkForwardResolver: AnyCtor;
  readonly VintagesResolver: AnyCtor;
  readonly PageScratch: AnyCtor;
  readonly JsonFormatWriter: AnyCtor;
  readonly CsvFormatWriter: AnyCtor;
  readonly ArrowFormatWriter: AnyCtor;
  readonly splitPresentation: AnyFn;
  readonly ByteWriter: AnyCtor;
  readonly encodeHead: AnyFn;
  readonly RequestKey: AnyCtor;
}

export async function loadKit(root: string): Promise<PipelineKit> {
  const at = (p: string): Promise<any> => import(pathToFileURL(resolve(root, 'dist/src', p)).href);
  const [slot, load, builder, manifest, local, products, clock, page, pr, wf, vr, scratch, json, csv, arrow, pres, bw, enc, key] = await Promise.all([
    at('generations/dataset-slot.js'),
    at('generations/load-generation.js'),
    at('generations/table-builder.js'),
    at('snapshot/read-manifest.js'),
    at('source/local-source.js'),
    at('catalog/products.js'),
    at('time/clock.js'),
    at('pipeline/data-page.js'),
    at('query/page-resolver.js'),
    at('query/walk-forward-resolver.js'),
    at('query/vintages-resolver.js'),
    at('pipeline/page-scratch.js'),
    at('format/json/json-writer.js'),
    at('format/csv/csv-writer.js'),
    at('format/arrow/arrow-writer.js'),
    at('format/presentation.js'),
    at('format/bytes/byte-writer.js'),
    at('format/encoded-body.js'),
    at('cache/request-key.js'),
  ]);
  return {
    root,
    DatasetSlot: slot.DatasetSlot,
    loadGeneration: load.loadGeneration,
    inlineBuilder: builder.inlineBuilder,
    readManifest: manifest.readManifest,
    LocalSource: local.LocalSource,
    findProduct: products.findProduct,
    systemClock: clock.systemClock,
    Pinned: page.Pinned,
    pinRequest: page.pinRequest,
    PageResolver: pr.PageResolver,
    WalkForwardResolver: wf.WalkForwardResolver,
    VintagesResolver: vr.VintagesResolver,
    PageScratch: scratch.PageScratch,
    JsonFormatWriter: json.JsonFormatWriter,
    CsvFormatWriter: csv.CsvFormatWriter,
    ArrowFormatWriter: arrow.ArrowFormatWriter,
    splitPresentation: pres.splitPresentation,
    ByteWriter: bw.ByteWriter,
    encodeHead: enc.encodeHead,
    RequestKey: key.RequestKey,
  };
}
