/**
 * Issue 3: time and peak memory to load the scale-10m snapshot from S3 (s3rver) into a
 * serving generation, and walk-forward p99 while a new generation is swapped in.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchData, RunResult } from '../alternatives/types.js';
import type { HttpServerAlternative } from '../alternatives/http-server.js';
import type { PitcacheOptions } from '../alternatives/pitcache.js';
import { ensureData } from '../data/ensure-data.js';
import { planFor, type DataSetName } from '../data/plan.js';
import { S3_ENV, startS3, type LocalS3 } from '../lib/s3.js';
import type { BenchResults } from '../report/model.js';
import { manifestPath, objectPath } from '../../src/snapshot/manifest.js';
import { generationObjectName } from '../../src/snapshot/write-generation.js';
import { buildWorkloads } from '../workloads.js';
import { requireLoaded } from './scale.js';
import type { RunContext } from './throughput.js';

const SET: DataSetName = 'scale-10m';
const BUCKET = 'bench';
const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export interface S3Options {
  readonly serverCpus?: string;
  /** wrk and s3rver share these */
  readonly otherCpus?: string;
}

export async function runS3(
  ctx: RunContext,
  dataRoot: string,
  queryCount: number,
  makePitcache: (o: PitcacheOptions) => HttpServerAlternative,
  cpus: S3Options,
  res: BenchResults,
): Promise<void> {
  const data = await ensureData(dataRoot, SET, ctx.quick, ctx.log);
  const prefix = data.name + (ctx.quick ? '-quick' : '');
  const out: NonNullable<BenchResults['s3']> = {
    dataSet: prefix,
    rows: data.totalRows,
    arrowBytes: data.totalArrowBytes,
    load: { ok: false, error: 'not run' },
  };
  res.s3 = out;
  let s3: LocalS3 | null = null;
  let alt: HttpServerAlternative | null = null;
  try {
    s3 = await startS3(BUCKET, cpus.otherCpus);
    ctx.log(`s3: uploading ${data.name} to s3rver`);
    const t0 = performance.now();
    for (const d of data.datasets) {
      await s3.put(`${prefix}/${objectPath(d.productId, d.dataset, generationObjectName(1))}`, d.arrowPath);
      await s3.put(`${prefix}/${manifestPath(d.productId, d.dataset)}`, join(data.sourceDir, manifestPath(d.productId, d.dataset)));
    }
    const uploadSeconds = (performance.now() - t0) / 1000;
    alt = makePitcache({
      workers: 1,
      source: `s3://${BUCKET}/${prefix}`,
      keys: data.keysPath,
      extraArgs: ['--s3-endpoint', s3.endpoint, '--s3-force-path-style'],
      env: { ...process.env, ...S3_ENV },
      ...(cpus.serverCpus === undefined ? {} : { serverCpus: cpus.serverCpus }),
      ...(cpus.otherCpus === undefined ? {} : { wrkCpus: cpus.otherCpus }),
      name: 'pitcache (S3 source)',
    });
    const setup = await alt.setup(data);
    await requireLoaded(alt, data);
    out.load = { ok: true, uploadSeconds, readySeconds: setup.loadSeconds, memory: alt.memory() };
    ctx.log(`s3: ready in ${setup.loadSeconds.toFixed(2)} s, VmHWM ${((out.load.memory?.hwm ?? NaN) / 2 ** 20).toFixed(0)} MiB`);
    out.swap = await swap(ctx, alt, s3, data, prefix, queryCount, setup.loadSeconds).catch((e: unknown) => ({ ok: false as const, error: errorText(e) }));
  } catch (e) {
    if (!out.load.ok) out.load = { ok: false, error: errorText(e) };
    ctx.log(`s3: failed: ${errorText(e).split('\n')[0]}`);
  } finally {
    await alt?.teardown();
    await s3?.close();
  }
}

async function swap(
  ctx: RunContext,
  alt: HttpServerAlternative,
  s3: LocalS3,
  data: BenchData,
  prefix: string,
  queryCount: number,
  readySeconds: number,
): Promise<NonNullable<NonNullable<BenchResults['s3']>['swap']>> {
  const queries = buildWorkloads(planFor(SET, ctx.quick), { count: queryCount, pageWalkCount: 1 })['walk-forward-series'];
  // Long enough that the refresh (download, verify, decode, index) ends inside the measured
  // run: under serving load it took about 2.4x the idle start-up, and it starts a quarter in.
  const durationSec = Math.max(ctx.durationSec, 10, Math.ceil(5 * readySeconds));
  const opts = { connections: ctx.connections, durationSec, warmupSec: ctx.warmupSec };
  const baseline = await alt.run('walk-forward-series', queries, opts);
  ctx.log(`swap: baseline p99 ${baseline.p99Ms.toFixed(2)} ms`);

  // Publish generation 2 (the same rows under a new object): object first, manifest last.
  for (const d of data.datasets) {
    await s3.put(`${prefix}/${objectPath(d.productId, d.dataset, generationObjectName(2))}`, d.arrowPath);
    const m = JSON.parse(await readFile(join(data.sourceDir, manifestPath(d.productId, d.dataset)), 'utf8')) as Record<string, unknown>;
    const next = { ...m, generation: 2, object: generationObjectName(2), created_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
    await s3.putBytes(`${prefix}/${manifestPath(d.productId, d.dataset)}`, Buffer.from(JSON.stringify(next, null, 2) + '\n'));
  }

  // wrk starts first; the refresh lands about a quarter into the measured run.
  await alt.settle();
  const during: Promise<RunResult> = alt.run('walk-forward-series', queries, { ...opts, warmupSec: 0 });
  await new Promise((r) => setTimeout(r, (durationSec * 1000) / 4));
  const t0 = performance.now();
  const refresh = await alt.refresh();
  const refreshSeconds = (performance.now() - t0) / 1000;
  const result = await during;
  ctx.log(`swap: refresh ${refresh.status} in ${refreshSeconds.toFixed(2)} s, p99 during ${result.p99Ms.toFixed(2)} ms`);
  if (refreshSeconds > durationSec * 0.75) ctx.log('swap: the refresh outlasted the measured run; raise --duration');
  const status = await fetch(`${alt.baseUrl}/admin/status`, { headers: { 'x-api-key': data.adminKey } });
  const j = (await status.json()) as { datasets: { dataset: string; generation: number | null }[] };
  const generationAfter = j.datasets.find((d) => d.dataset === data.datasets[0]?.id)?.generation ?? null;
  return { ok: true, baseline, during: result, refreshSeconds, refreshStatus: refresh.status, generationAfter, memoryAfter: alt.memory() };
}
