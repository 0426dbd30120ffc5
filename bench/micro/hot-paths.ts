/**
 * tinybench micro-benchmarks of the request hot path on a realistic table: a generated
 * snapshot decoded and indexed exactly as the server does (decode-arrow + build-table).
 * Run by bench/run.ts, or alone: `node dist/bench/micro/hot-paths.js [arrow file] [product/dataset]`.
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { findProduct } from '../../src/catalog/products.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { PageResolver } from '../../src/query/page-resolver.js';
import { DateOrderIndex } from '../../src/query/date-order-index.js';
import { LastVisibleIndex } from '../../src/query/last-visible-index.js';
import { SeriesValueIndex } from '../../src/query/series-value-index.js';
import { ByteWriter } from '../../src/format/bytes/byte-writer.js';
import { writeEnvelope, type EnvelopeMeta } from '../../src/format/json/envelope.js';
import { RowCache } from '../../src/format/arenas/row-cache.js';
import { ROW_FORMAT_JSON } from '../../src/format/arenas/row-owner.js';
import { RowRenderer } from '../../src/format/json/row-renderer.js';
import { buildTable } from '../../src/store/build-table.js';
import { decodeArrowSnapshot } from '../../src/store/decode-arrow.js';
import { dayEndUs, parseDate } from '../../src/time/instant.js';
import type { BenchQuery } from '../alternatives/types.js';
import { toPath } from '../workloads.js';

export interface MicroResult {
  readonly name: string;
  readonly opsPerSec: number;
  readonly meanUs: number;
  readonly p99Us: number;
  readonly samples: number;
  /** rows the case renders or resolves, when it does */
  readonly rows?: number;
}

export interface MicroInput {
  readonly arrowPath: string;
  /** "product/dataset" of that file */
  readonly dataset: string;
  /** queries of that dataset, one per case (walk-forward, latest, page) */
  readonly queries: Readonly<Record<string, BenchQuery>>;
  readonly quick: boolean;
}

export async function runMicro(input: MicroInput): Promise<{ table: { rows: number; buildMs: number }; results: MicroResult[] }> {
  const [productId, dataset] = input.dataset.split('/') as [string, string];
  const product = findProduct(productId)!;
  const bytes = await readFile(input.arrowPath);
  const t0 = performance.now();
  const table = buildTable(decodeArrowSnapshot(bytes), dayEndUs(parseDate(product.floor!)!));
  const buildMs = performance.now() - t0;
  const rowCache = RowCache.allocate(64 * 1024 * 1024);
  rowCache.register(1, table.columns);
  const renderer = new RowRenderer(table, rowCache.owners.ownerOf(table.columns, ROW_FORMAT_JSON));
  const resolver = new PageResolver();
  const gen = { table, seriesIndex: new SeriesValueIndex(table), dateOrder: new DateOrderIndex(table), lastVisible: new LastVisibleIndex(table) };
  const resolvePage = (q: (typeof parsed)[string], resume: null) => resolver.resolve(gen, q, resume);
  const out = new ByteWriter(256 * 1024);
  const raw = (q: BenchQuery): string => toPath(q).split('?')[1] ?? '';
  const parsed = Object.fromEntries(Object.entries(input.queries).map(([k, q]) => [k, parseQuery(raw(q), product, dataset)]));
  let sink = 0;
  const bench = new Bench(
    input.quick ? { time: 100, warmupTime: 20, iterations: 5, warmupIterations: 2 } : { time: 2000, warmupTime: 500, iterations: 20, warmupIterations: 5 },
  );
  const rowsOfTask = new Map<string, number>();

  for (const [name, q] of Object.entries(input.queries)) {
    const text = raw(q);
    bench.add(`parseQuery (${name})`, () => {
      sink += parseQuery(text, product, dataset).limit;
    });
  }
  for (const [name, q] of Object.entries(parsed)) {
    bench.add(`resolvePage (${name})`, () => {
      sink += resolvePage(q, null).count;
    });
    // The page is copied: resolvePage's result is scratch memory that the next call reuses.
    const page = resolvePage(q, null);
    const rows = page.rows.slice(0, page.count);
    const renderName = `RowRenderer.writeRows (${name}, ${page.count} rows)`;
    const envelopeName = `writeEnvelope + writeRows (${name}, ${page.count} rows)`;
    rowsOfTask.set(renderName, page.count).set(envelopeName, page.count).set(`resolvePage (${name})`, page.count);
    bench.add(renderName, () => {
      out.reset();
      renderer.writeRows(out, rows, page.count);
      sink += out.pos;
    });
    // The row cache's best case: the page's rows were rendered by an earlier request (a
    // walk-forward step shares all but one row with the step before).
    const cachedName = `RowRenderer.writeRowsCached (${name}, ${page.count} rows, all cached)`;
    rowsOfTask.set(cachedName, page.count);
    bench.add(cachedName, () => {
      out.reset();
      renderer.writeRowsCached(out, rows, page.count, rowCache);
      sink += out.pos;
    });
    const meta: EnvelopeMeta = {
      productId,
      count: page.count,
      nextCursor: page.next === null ? null : 'AQEAAAA3jsCXBVAAAEoAAAADAAAALwAAACoBaLc',
      retrievedAtUs: Date.now() * 1000,
      totalCount: page.total,
      recordId: 'req_0123456789abcdef0123',
      dataLatestDate: table.latestDateByThr.query(Infinity),
      dataAgeHours: 12.5,
      extensionKeys: ['generation', 'as_of', 'vintage_floor', 'floor_applied'],
      extensionValues: [1, null, product.floor, 'false'],
    };
    bench.add(envelopeName, () => {
      out.reset();
      writeEnvelope(out, meta, (w) => renderer.writeRows(w, rows, page.count));
      sink += out.pos;
    });
  }
  await bench.run();
  if (sink === -1) console.log(sink);

  const results = bench.tasks.map((t): MicroResult => {
    const r = t.result;
    const ok = r !== undefined && 'latency' in r;
    const rows = rowsOfTask.get(t.name);
    return {
      name: t.name,
      opsPerSec: ok ? r.throughput.mean : NaN,
      meanUs: ok ? r.latency.mean * 1000 : NaN,
      p99Us: ok ? (r.latency.p99 ?? NaN) * 1000 : NaN,
      samples: ok ? r.latency.samples.length : 0,
      ...(rows === undefined ? {} : { rows }),
    };
  });
  return { table: { rows: table.rows, buildMs }, results };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ensureData } = await import('../data/ensure-data.js');
  const { planFor } = await import('../data/plan.js');
  const { microQueries } = await import('./micro-queries.js');
  const data = await ensureData('bench/.data', 'main', true, console.log);
  const id = process.argv[3] ?? 'wssi_us/demand_shock';
  const ds = data.datasets.find((d) => d.id === id)!;
  const r = await runMicro({ arrowPath: process.argv[2] ?? ds.arrowPath, dataset: id, queries: microQueries(planFor('main', true), id), quick: false });
  console.log(`table: ${r.table.rows} rows built in ${r.table.buildMs.toFixed(0)} ms`);
  for (const x of r.results)
    console.log(`${x.name.padEnd(60)} ${x.opsPerSec.toFixed(0).padStart(10)} ops/s  mean ${x.meanUs.toFixed(1)} µs  p99 ${x.p99Us.toFixed(1)} µs`);
}
