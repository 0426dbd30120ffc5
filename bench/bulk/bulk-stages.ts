/**
 * The bulk workloads (walk-forward-dataset, latest, page-walk) in process, through the data
 * endpoint's own stages as a serving thread runs them for one request (write-stage.ts,
 * data-endpoint.ts), with no socket, each stage timed in CPU µs (process.cpuUsage):
 *   pin      presentation split, query parse, cursor decode, the generation pinned
 *   resolve  the page's rows and its envelope (split further by a CPU profile: stage-profile.ts)
 *   etag     the request key's two hashes, which the ETag and the response cache use
 *   write    prefix, middle and suffix by the format's writer
 *   copy     one copy of the body (the transport's pooled copy of what the socket did not
 *            take at once, at most the body: uws-server.ts)
 *   gzip     the middle gzip-encoded with its crc, as for `Accept-Encoding: gzip` (the HTTP
 *            bench's wrk asks for identity, so it is apart from the total)
 * on a generated dataset of millions of rows and thousands of series (bulk-data.ts). Several
 * builds (--roots A:B, each a checkout with `npm run build` done) are loaded in one process
 * and measured in alternating rounds, the least round of each kept (this VM's speed drifts
 * by minutes: only ratios of one run mean anything).
 *
 *   npm run bench:bulk -- [--roots /tmp/base:.] [--workloads ...] [--formats json,csv,arrow]
 *     [--count 24] [--chains 2] [--rounds 3] [--start 2023-01-01] [--profile] [--out FILE]
 *     [--same]  (no timing: every page the same bytes from every root)
 *     [--paths-out DIR]  (no timing: the paths files of wrk, bench/wrk/paths.lua, per workload and format)
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchQuery, WorkloadName } from '../alternatives/types.js';
import { buildWorkloads, inFormat, toPath, writePathsFile } from '../workloads.js';
import { bulkPlan, ensureBulkData } from './bulk-data.js';
import { loadKit, type PipelineKit } from './pipeline-kit.js';
import { RESOLVE_PARTS, StageProfiler, type ResolvePart } from './stage-profile.js';

const STAGES = ['pin', 'resolve', 'etag', 'write', 'copy', 'gzip'] as const;
type Stage = (typeof STAGES)[number];
type Format = 'json' | 'csv' | 'arrow';

const { values: opt } = parseArgs({
  options: {
    roots: { type: 'string', default: '.' },
    workloads: { type: 'string', default: 'walk-forward-dataset,latest,page-walk' },
    formats: { type: 'string', default: 'json,csv,arrow' },
    count: { type: 'string', default: '24' },
    chains: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    start: { type: 'string', default: '2023-01-01' },
    'data-dir': { type: 'string', default: 'bench/.data' },
    profile: { type: 'boolean', default: false },
    out: { type: 'string' },
    /** writes `<dir>/<workload>-<format>.txt`, the paths wrk's bench/wrk/paths.lua reads, and exits */
    'paths-out': { type: 'string' },
    /** instead of timing: every page of every query, in every format, byte for byte the same from each root (retrieved_at fixed) */
    same: { type: 'boolean', default: false },
  },
});

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/* eslint-disable @typescript-eslint/no-explicit-any -- the stages of another build (pipeline-kit.ts) */
/** One build's serving-thread state: resolvers, writers and buffers made once, as createDataEndpoint makes them. */
class Pipe {
  readonly pinned: any;
  readonly ctx = { registry: { ready: true }, supply: null, fetched: null };
  readonly writers: Record<Format, any>;
  readonly out: any;
  readonly key: any;
  readonly rest: Uint8Array = new Uint8Array(64 << 20);
  readonly stamp = { retrievedAtUs: 0, recordId: 'req_bench000000000000000' };

  constructor(
    readonly kit: PipelineKit,
    readonly slots: Map<string, any>,
  ) {
    this.pinned = new kit.Pinned({
      rows: new kit.PageResolver(),
      walkForward: new kit.WalkForwardResolver(),
      vintages: new kit.VintagesResolver(),
      page: new kit.PageScratch(),
    });
    this.writers = { json: new kit.JsonFormatWriter(null), csv: new kit.CsvFormatWriter(null), arrow: new kit.ArrowFormatWriter() };
    this.out = new kit.ByteWriter(256 * 1024);
    this.key = new kit.RequestKey();
  }

  /** One request, its stages' CPU µs added to `acc`; returns its rows and next cursor. */
  request(
    dataset: string,
    rawQuery: string,
    format: Format,
    gzip: boolean,
    acc: Record<Stage, number>,
  ): { rows: number; next: string | null; bytes: number; body: Uint8Array } {
    const { kit, out, writers } = this;
    const slot = this.slots.get(dataset);
    const t0 = cpuUs();
    const p = kit.splitPresentation(rawQuery);
    const writer = writers[format];
    const request = kit.pinRequest('rows', this.pinned, this.ctx, slot, p.rest);
    const t1 = cpuUs();
    const page = request.resolve(request.gen.outputColumns);
    const t2 = cpuUs();
    this.key.fill({
      dataset: slot.keyText,
      generation: request.gen.number,
      canonical: request.canonical,
      format,
      columns: '*',
      encoding: null,
      cursor: request.cursor,
    });
    const t3 = cpuUs();
    const meta = page.meta;
    const shape = writer.shapeOf(page.view);
    out.reset();
    this.stamp.retrievedAtUs = opt.same ? 1_767_225_600_000_000 : Date.now() * 1000;
    writer.writePrefix(out, meta, shape, this.stamp);
    const middleAt = out.pos;
    writer.writeMiddle(out, page);
    const middleEnd = out.pos;
    writer.writeSuffix(out, meta, this.stamp);
    const t4 = cpuUs();
    const body: Uint8Array = out.view();
    this.rest.set(body.byteLength <= this.rest.byteLength ? body : body.subarray(0, this.rest.byteLength));
    const t5 = cpuUs();
    if (gzip && middleEnd - middleAt >= 1024) kit.encodeHead(body.subarray(middleAt, middleEnd), 'gzip');
    const t6 = cpuUs();
    acc.pin += t1 - t0;
    acc.resolve += t2 - t1;
    acc.etag += t3 - t2;
    acc.write += t4 - t3;
    acc.copy += t5 - t4;
    acc.gzip += t6 - t5;
    return { rows: meta.count, next: meta.nextCursor, bytes: body.byteLength, body };
  }
}

async function loadPipe(kit: PipelineKit, dir: string, datasets: readonly string[]): Promise<Pipe> {
  const source = new kit.LocalSource(dir);
  const slots = new Map<string, any>();
  for (const id of datasets) {
    const [productId, dataset] = id.split('/') as [string, string];
    const slot = new kit.DatasetSlot(kit.findProduct(productId), dataset);
    const check = await kit.readManifest(source, { productId, dataset }, null);
    if (check.status !== 'ok') throw new Error(`${id}: no manifest in ${dir}`);
    const t0 = performance.now();
    const { generation } = await kit.loadGeneration(source, slot, check.manifest, kit.systemClock, kit.inlineBuilder);
    slot.swap(generation);
    slots.set(id, slot);
    console.error(`${kit.root}: ${id} loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return new Pipe(kit, slots);
}
/* eslint-enable @typescript-eslint/no-explicit-any */

interface Run {
  us: Record<Stage, number>;
  rows: number;
  requests: number;
  bytes: number;
  /** page-walk: CPU µs of each page but the gzip, per chain */
  chains: number[][];
}

function runOnce(pipe: Pipe, queries: readonly BenchQuery[], format: Format, chains: boolean, gzip: boolean): Run {
  const us = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const run: Run = { us, rows: 0, requests: 0, bytes: 0, chains: [] };
  for (const q of queries) {
    const path = toPath(q);
    const qs = path.slice(path.indexOf('?') + 1);
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const before = us.gzip;
      const t0 = cpuUs();
      const r = pipe.request(q.dataset, `${qs}&format=${format}${cursor === null ? '' : `&cursor=${cursor}`}`, format, gzip, us);
      pages.push(cpuUs() - t0 - (us.gzip - before));
      run.rows += r.rows;
      run.bytes += r.bytes;
      run.requests++;
      cursor = chains ? r.next : null;
    } while (cursor !== null);
    if (chains) run.chains.push(pages);
  }
  return run;
}

/** Every page of each workload's queries (page-walk: whole chains) in every format, from every pipe: the same bytes, or it throws. */
function sameBytes(pipes: readonly Pipe[], wl: Record<WorkloadName, BenchQuery[]>, count: number): void {
  const us = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  for (const workload of opt.workloads.split(',') as WorkloadName[]) {
    const chains = workload === 'page-walk';
    for (const format of opt.formats.split(',') as Format[]) {
      let pages = 0;
      let bytes = 0;
      for (const q of wl[workload].slice(0, chains ? Number(opt.chains) : count)) {
        const path = toPath(q);
        const qs = path.slice(path.indexOf('?') + 1);
        let cursor: string | null = null;
        do {
          const raw = `${qs}&format=${format}${cursor === null ? '' : `&cursor=${cursor}`}`;
          const first = pipes[0]!.request(q.dataset, raw, format, false, us);
          const expected = Buffer.from(first.body);
          for (const pipe of pipes.slice(1)) {
            const r = pipe.request(q.dataset, raw, format, false, us);
            if (!expected.equals(r.body)) throw new Error(`${pipe.kit.root}: ${q.dataset}?${raw}: not the bytes of ${pipes[0]!.kit.root}`);
          }
          pages++;
          bytes += expected.byteLength;
          cursor = chains ? first.next : null;
        } while (cursor !== null);
      }
      console.log(`${workload} ${format}: ${pages} pages, ${bytes.toLocaleString('en-US')} bytes, the same from ${pipes.length} builds`);
    }
  }
}

const median = (a: readonly number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? NaN;
const total = (r: Run): number => STAGES.filter((s) => s !== 'gzip').reduce((n, s) => n + r.us[s], 0);

async function main(): Promise<void> {
  const { dir } = await ensureBulkData(resolve(opt['data-dir']), opt.start, (m) => console.error(m));
  const plan = bulkPlan(opt.start);
  const datasets = plan.datasets.map((p) => `${p.def.productId}/${p.def.dataset}`);
  const count = Number(opt.count);
  const wl = buildWorkloads(plan, { count, pageWalkCount: Number(opt.chains) });
  if (opt['paths-out'] !== undefined) {
    for (const workload of opt.workloads.split(',') as WorkloadName[])
      for (const format of opt.formats.split(',') as Format[])
        await writePathsFile(`${opt['paths-out']}/${workload}-${format}.txt`, format === 'json' ? wl[workload] : inFormat(wl[workload], format));
    process.exit(0);
  }
  const roots = opt.roots.split(':').map((r) => resolve(r));
  const pipes: Pipe[] = [];
  for (const root of roots) pipes.push(await loadPipe(await loadKit(root), dir, datasets));
  if (opt.same) {
    sameBytes(pipes, wl, count);
    process.exit(0);
  }
  const rounds = Number(opt.rounds);
  const results: object[] = [];
  for (const workload of opt.workloads.split(',') as WorkloadName[]) {
    const chains = workload === 'page-walk';
    const queries = wl[workload].slice(0, chains ? Number(opt.chains) : count);
    for (const format of opt.formats.split(',') as Format[]) {
      // Warm-up: every query once (builds the date order and per-series index, as a thread's first bulk answer does).
      for (const pipe of pipes) runOnce(pipe, chains ? queries.slice(0, 1) : queries, format, chains, true);
      const best: (Run | null)[] = pipes.map(() => null);
      for (let round = 0; round < rounds; round++) {
        for (let j = 0; j < pipes.length; j++) {
          const i = round % 2 === 0 ? j : pipes.length - 1 - j;
          const r = runOnce(pipes[i]!, queries, format, chains, true);
          if (best[i] === null || total(r) < total(best[i]!)) best[i] = r;
        }
      }
      for (let i = 0; i < pipes.length; i++) {
        const b = best[i]!;
        let parts: Record<ResolvePart, number> | null = null;
        if (opt.profile) {
          const prof = new StageProfiler();
          await prof.start();
          const r = runOnce(pipes[i]!, queries, format, chains, false);
          parts = await prof.stop();
          for (const p of RESOLVE_PARTS) parts[p] /= r.rows;
        }
        const perRow = Object.fromEntries(STAGES.map((s) => [s, b.us[s] / b.rows]));
        const lastOverMedian = b.chains.filter((c) => c.length > 2).map((c) => c.at(-1)! / median(c.slice(0, -1)));
        const medianPage = b.chains.length === 0 ? null : median(b.chains.flatMap((c) => c.slice(0, -1)));
        const res = {
          root: roots[i],
          workload,
          format,
          requests: b.requests,
          rows: b.rows,
          bytesPerRow: b.bytes / b.rows,
          usPerRow: total(b) / b.rows,
          rowsPerCpuSecond: (b.rows / total(b)) * 1e6,
          stagesUsPerRow: perRow,
          resolvePartsUsPerRow: parts,
          pages: chains ? { medianUs: medianPage, lastOverMedian, pagesPerChain: b.chains.map((c) => c.length) } : null,
        };
        results.push(res);
        const st = STAGES.map((s) => `${s} ${perRow[s]!.toFixed(3)}`).join(', ');
        const pr = parts === null ? '' : ` [resolve: ${RESOLVE_PARTS.map((p) => `${p} ${parts[p].toFixed(3)}`).join(', ')}]`;
        const pw = chains ? ` pages: median ${((medianPage ?? 0) / 1000).toFixed(2)} ms, last/median ${lastOverMedian.map((x) => x.toFixed(2)).join(' ')}` : '';
        console.log(
          `${roots[i]} ${workload} ${format}: ${res.usPerRow.toFixed(3)} µs/row, ${Math.round(res.rowsPerCpuSecond).toLocaleString('en-US')} rows/CPU-s (${b.requests} req, ${b.rows} rows, ${res.bytesPerRow.toFixed(0)} B/row): ${st}${pr}${pw}`,
        );
      }
      if (pipes.length === 2) {
        const [a, b] = [best[0]!, best[1]!];
        console.log(`  B/A CPU per row: ${(total(b) / b.rows / (total(a) / a.rows)).toFixed(3)}`);
      }
    }
  }
  if (opt.out !== undefined) await writeFile(opt.out, JSON.stringify({ load: (await import('node:os')).loadavg(), results }, null, 2) + '\n');
  process.exit(0);
}

await main();
