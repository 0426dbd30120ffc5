/* global process, console */
// The handler's budget: what share of the ceiling a workload can take, given what pitcache's
// handler costs per request in process, measured in the same minutes as the shares.
//
// One thread (pin it: taskset -c 0) holds three things: the ceiling (uWS answering a fixed
// body of the workload's mean answer size, as bench/servers/ceiling-server.ts does),
// pitcache's handler behind its own transport (src/http/uws-server.ts) on the bench data,
// and the same handler called directly. Each round drives the two servers in turn with wrk
// on CPU 1 (the bench's paths script, 64 connections; the order alternates by round), then
// times the handler in process (10 batches of 2,000 requests, their median).
//
// If the serving thread is the bottleneck and the transport costs what the ceiling costs
// (bench/hand/transport-floor.mjs: it does, within noise), a request costs the ceiling's
// 1/c plus the handler's X, so pitcache's share of the ceiling is 1 / (1 + X·c). A target
// share t then leaves the handler X ≤ (1/t - 1) / c. The round prints the measured share
// beside that prediction and the budget, so a run tells the code's cost from the VM's.
//
// Usage: taskset -c 0 node bench/hand/budget.mjs ROOT workload ROUNDS SECONDS [target%]
//   ROOT: a checkout with dist/ built; paths from bench/hand/paths.mjs; response cache and
//   row arena at the server's defaults (64 MiB each; ROW_MIB sets the row arena, PAGE_MIB the page arena)
import { resolve } from 'node:path';
import { listenCeiling } from './ceiling-app.mjs';
import { benchHandler, benchRequests } from './handler-setup.mjs';
import { wrkPaths } from './wrk-paths.mjs';

const here = resolve(import.meta.dirname, '../..');
const root = resolve(process.argv[2] ?? here);
const workload = process.argv[3] ?? 'walk-forward-loop';
const rounds = Number(process.argv[4] ?? 4);
const seconds = Number(process.argv[5] ?? 5);
const target = Number(process.argv[6] ?? 80) / 100;
const load = (p) => import(`${root}/dist/${p}`);

const handler = await benchHandler(root, { responseCacheMiB: 64, rowMiB: Number(process.env.ROW_MIB ?? 64) });
const requests = benchRequests(workload);
let next = 0;
let bodyBytes = 0;
const run = (n) => {
  for (let k = 0; k < n; k++) {
    const r = handler(requests[next++ % requests.length]);
    if (r.status !== 200) throw new Error(`status ${r.status} for ${requests[(next - 1) % requests.length].rawQuery}`);
    bodyBytes += r.body.byteLength;
  }
};
const warm = Math.max(40_000, requests.length);
run(warm);
const bytes = Math.round(bodyBytes / warm);

const { listen } = await load('src/http/uws-server.js');
const ceilingPort = 18641;
const pitcachePort = 18642;
const closeCeiling = await listenCeiling(root, bytes, ceilingPort);
const server = await listen(handler, { host: '127.0.0.1', port: pitcachePort });

/** µs per request in process: the median of 10 batches of 2,000 (the least is printed too). */
const timeHandler = () => {
  const times = [];
  for (let k = 0; k < 10; k++) {
    const t0 = process.hrtime.bigint();
    run(2000);
    times.push(Number(process.hrtime.bigint() - t0) / 2000 / 1000);
  }
  times.sort((a, b) => a - b);
  return { least: times[0], median: (times[4] + times[5]) / 2 };
};
const rate = async (port) => (await wrkPaths(port, workload, seconds)) / seconds;

await rate(ceilingPort);
await rate(pitcachePort);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const pct = (x) => `${(100 * x).toFixed(0)}%`;
console.log(`${workload}, ${bytes} B mean answer, ${rounds} rounds of ${seconds} s per server, budget for ${pct(target)} of the ceiling`);
console.log('| round | ceiling req/s | pitcache req/s | share | handler µs (least) | predicted share 1/(1+X·c) | handler budget µs |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
const all = { c: [], p: [], share: [], x: [], predicted: [], budget: [] };
for (let r = 1; r <= rounds; r++) {
  let c;
  let p;
  if (r % 2 === 1) {
    c = await rate(ceilingPort);
    p = await rate(pitcachePort);
  } else {
    p = await rate(pitcachePort);
    c = await rate(ceilingPort);
  }
  const x = timeHandler();
  const predicted = 1 / (1 + x.median * 1e-6 * c);
  const budget = ((1 / target - 1) / c) * 1e6;
  for (const [k, v] of Object.entries({ c, p, share: p / c, x: x.median, predicted, budget })) all[k].push(v);
  console.log(`| ${r} | ${fmt(c)} | ${fmt(p)} | ${pct(p / c)} | ${fmt(x.median, 2)} (${fmt(x.least, 2)}) | ${pct(predicted)} | ${fmt(budget, 2)} |`);
}
const m = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, median(v)]));
console.log(`| median | ${fmt(m.c)} | ${fmt(m.p)} | ${pct(m.share)} | ${fmt(m.x, 2)} | ${pct(m.predicted)} | ${fmt(m.budget, 2)} |`);
server.close();
closeCeiling();
process.exit(0);
