/* global process, console */
// A workload's paths replayed through createApiHandler in process (no socket) on the bench
// data, as one serving thread answers them: the handler's own time per request (the least
// of 30 batches of BATCH=2,000: the VM drifts, the least is what the code costs) or, with
// ALLOC=N, the bytes it allocates per request (V8's sampling heap profiler, collected
// objects included; RETAINED=1: only what survives) and the N functions allocating most.
// HTTP=seconds (with ALLOC) measures it behind the transport, driven by wrk (see below).
// PROF=file writes a CPU profile of the timed batches; ROW_MIB sets the row arena (default
// 64, the server's default); WARM and N the warm-up and sampled request counts (large
// pages want fewer).
// Usage: node bench/hand/in-process.mjs ROOT workload [responseCacheMiB]
//   ROOT: a checkout with dist/ built (A/B: run it on two); paths from bench/hand/paths.mjs
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { benchHandler, benchRequests } from './handler-setup.mjs';

const here = resolve(import.meta.dirname, '../..');
const root = resolve(process.argv[2] ?? here);
const workload = process.argv[3] ?? 'walk-forward-loop';
const responseCacheMiB = Number(process.argv[4] ?? 0);
const load = (p) => import(`${root}/dist/${p}`);
const handler = await benchHandler(root, { responseCacheMiB, rowMiB: Number(process.env.ROW_MIB ?? 64) });
const requests = benchRequests(workload);
let next = 0;
const run = (n) => {
  for (let k = 0; k < n; k++) {
    const r = handler(requests[next++ % requests.length]);
    if (r.status !== 200) throw new Error(`status ${r.status} for ${requests[(next - 1) % requests.length].rawQuery}`);
  }
};
run(Number(process.env.WARM ?? 40_000)); // warm-up: JIT, caches

/**
 * HTTP=seconds (with ALLOC): the same handler behind pitcache's transport (src/http/uws-server.ts)
 * on this thread, driven by wrk on CPU 1 with the workload's paths for that long after 3 s of
 * warm-up; the sampled allocation is then divided by the requests wrk counted.
 */
const overHttp = Number(process.env.HTTP ?? 0);
let wrkRun = null;
if (overHttp > 0) {
  const { listen } = await load('src/http/uws-server.js');
  const { wrkPaths } = await import('./wrk-paths.mjs');
  const port = 18632;
  await listen(handler, { host: '127.0.0.1', port });
  wrkRun = (sec) => wrkPaths(port, workload, sec);
  await wrkRun(3);
}

if (process.env.ALLOC) {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 128,
    includeObjectsCollectedByMajorGC: !process.env.RETAINED,
    includeObjectsCollectedByMinorGC: !process.env.RETAINED,
  });
  let n = Number(process.env.N ?? 20_000);
  if (wrkRun === null) run(n);
  else n = await wrkRun(overHttp);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const by = new Map();
  let total = 0;
  const walk = (node) => {
    const f = node.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    total += node.selfSize;
    if (node.selfSize > 0) by.set(key, (by.get(key) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c);
  };
  walk(profile.head);
  console.log(`${workload}${wrkRun === null ? '' : ` over HTTP (${n} requests)`}: ${(total / n).toFixed(0)} B allocated per request`);
  for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.ALLOC))) console.log(`${(v / n).toFixed(0).padStart(7)}  ${k}`);
  if (wrkRun !== null) process.exit(0);
} else {
  // PROF=file: a CPU profile of the timed batches only (no load, no warm-up) to that file.
  let session;
  if (process.env.PROF) {
    const { Session } = await import('node:inspector/promises');
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const before = handler.cacheStats().rows;
  const batch = Number(process.env.BATCH ?? 2000);
  const times = [];
  for (let k = 0; k < 30; k++) {
    const t0 = process.hrtime.bigint();
    run(batch);
    times.push(Number(process.hrtime.bigint() - t0) / batch / 1000);
  }
  if (session) writeFileSync(process.env.PROF, JSON.stringify((await session.post('Profiler.stop')).profile));
  times.sort((a, b) => a - b);
  const rows = handler.cacheStats().rows;
  const hits = rows === null ? 0 : rows.hits - before.hits;
  const misses = rows === null ? 0 : rows.misses - before.misses;
  const hitRate = rows === null ? 'row cache off' : `${((100 * hits) / Math.max(1, hits + misses)).toFixed(1)}% row hits in the timed batches`;
  const pages =
    (rows?.pages ?? null) === null
      ? ''
      : `, pages: ${((100 * (rows.pages.rowsCopied - before.pages.rowsCopied)) / Math.max(1, hits + misses + rows.pages.rowsCopied - before.pages.rowsCopied)).toFixed(1)}% of rows copied in runs, ${rows.pages.hits - before.pages.hits} of ${rows.pages.hits + rows.pages.misses - before.pages.hits - before.pages.misses} found, ${rows.pages.kept - before.pages.kept} kept, ${rows.pages.torn - before.pages.torn} torn`;
  console.log(
    `${workload}: least ${times[0].toFixed(2)} µs, p25 ${times[7].toFixed(2)} µs per request (response cache ${responseCacheMiB} MiB, ${hitRate}${pages})`,
  );
}
