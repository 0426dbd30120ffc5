/* global process, console, Buffer */
// What a request allocates before pitcache's handler does anything: the floor under the
// "KiB allocated per request" of bench/hand/alloc.sh. One thread, in this process, drives
// by wrk with a workload's paths and key, for DUR seconds after 3 s of warm-up:
//   ceiling    uWS answering a fixed body, reading nothing (bench/servers/ceiling-server.ts)
//   transport  pitcache's own transport (src/http/uws-server.ts: it reads the method, URL,
//              query and five headers into an HttpRequest) in front of a handler that
//              answers one fixed HttpResponse object
// Allocation is GcMetrics' count (src/metrics/gc-metrics.ts, what /metrics exports). The
// req/s of the two modes, alternated, say whether the transport itself costs throughput.
// Usage: node bench/hand/transport-floor.mjs ROOT ceiling|transport workload DUR [bytes]
//   ROOT: a checkout with dist/ built; paths from bench/hand/paths.mjs
import { listenCeiling } from './ceiling-app.mjs';
import { wrkPaths } from './wrk-paths.mjs';
import { resolve } from 'node:path';

const here = resolve(import.meta.dirname, '../..');
const root = resolve(process.argv[2] ?? here);
const mode = process.argv[3] ?? 'transport';
const workload = process.argv[4] ?? 'walk-forward-loop';
const dur = Number(process.argv[5] ?? 8);
const bytes = Number(process.argv[6] ?? 35000);
const port = 18631;
const load = (p) => import(`${root}/dist/${p}`);
const { GcMetrics } = await load('src/metrics/gc-metrics.js');

let close;
if (mode === 'ceiling') {
  close = await listenCeiling(root, bytes, port);
} else {
  const { listen } = await load('src/http/uws-server.js');
  const body = Buffer.alloc(bytes, 0x20);
  body[0] = 0x7b;
  body[bytes - 1] = 0x7d;
  const answer = { status: 200, headers: [], headerBlock: null, contentType: 'application/json', requestId: 'req_0123456789abcdef', body };
  const server = await listen(() => answer, { host: '127.0.0.1', port });
  close = () => server.close();
}
const gc = new GcMetrics('floor');
const run = (seconds) => wrkPaths(port, workload, seconds);
await run(3);
const a0 = gc.totals().allocatedBytes;
const n = await run(dur);
const a1 = gc.totals().allocatedBytes;
console.log(`${mode} ${workload}: ${n} requests in ${dur} s (${(n / dur).toFixed(0)} req/s), ${((a1 - a0) / n).toFixed(0)} B allocated per request`);
gc.close();
close();
process.exit(0);
