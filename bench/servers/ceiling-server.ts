/**
 * The ceiling (issue 11.1): uWebSockets.js answering every request with one fixed body of
 * the workload's mean answer size, on N threads sharing one port (SO_REUSEPORT, as
 * src/threads/serving-pool.ts does). No lookup, no encoding: what is left is HTTP + bytes,
 * the most any handler on this stack could reach on this machine.
 *
 * GET /metrics answers what the bench reads off pitcache's /metrics around a run (bench/lib/gc-scrape.ts):
 * the serving threads' allocation and collections, from the same GcMetrics, so that the
 * allocation table can show what HTTP alone costs per request on this stack. A route of its
 * own, matched in native code: the fixed-body route runs no more JS than it did.
 *
 *   node ceiling-server.js --port P --bytes B [--workers N] [--host 127.0.0.1]
 */
import { parseArgs } from 'node:util';
import { isMainThread, workerData } from 'node:worker_threads';
import { loadNativeUws } from '../../src/http/native-uws.js';
import { GC_KINDS, GcMetrics } from '../../src/metrics/gc-metrics.js';
import { spawnModuleWorker } from '../../src/generations/table-builder.js';

interface Init {
  readonly host: string;
  readonly port: number;
  readonly bytes: number;
  /** GC totals of every thread, GC_FIELDS doubles each (thread i at i * GC_FIELDS) */
  readonly totals: SharedArrayBuffer;
  readonly thread: number;
}

/** allocated bytes, then collections and pause seconds per GC kind */
const GC_FIELDS = 1 + 2 * GC_KINDS.length;
/** How often a thread publishes its totals: the one answering /metrics publishes its own at once. */
const PUBLISH_MS = 50;

/** This thread's GcMetrics totals into its slots of the shared totals. */
function publish(gc: GcMetrics, totals: Float64Array, thread: number): void {
  const t = gc.totals();
  const at = thread * GC_FIELDS;
  totals[at] = t.allocatedBytes;
  GC_KINDS.forEach((k, i) => {
    totals[at + 1 + i] = t.count[k];
    totals[at + 1 + GC_KINDS.length + i] = t.pauseSeconds[k];
  });
}

/** Every thread's totals in the names pitcache's /metrics uses (those gc-scrape.ts sums). */
function metricsText(totals: Float64Array): string {
  const lines: string[] = [];
  for (let thread = 0; thread * GC_FIELDS < totals.length; thread++) {
    const at = thread * GC_FIELDS;
    lines.push(`pitcache_heap_allocated_bytes_total{thread="${thread}"} ${totals[at]}`);
    GC_KINDS.forEach((kind, i) => {
      lines.push(`pitcache_gc_total{thread="${thread}",kind="${kind}"} ${totals[at + 1 + i]}`);
      lines.push(`pitcache_gc_pause_seconds_total{thread="${thread}",kind="${kind}"} ${totals[at + 1 + GC_KINDS.length + i]}`);
    });
  }
  return lines.join('\n') + '\n';
}

function serve(init: Init): void {
  const uws = loadNativeUws();
  const gc = new GcMetrics(`ceiling-${init.thread}`);
  const totals = new Float64Array(init.totals);
  setInterval(() => publish(gc, totals, init.thread), PUBLISH_MS).unref();
  // JSON-looking filler, built once: every answer is the same preallocated buffer.
  const body = Buffer.alloc(init.bytes, 0x20);
  if (init.bytes >= 2) {
    body[0] = 0x7b;
    body[init.bytes - 1] = 0x7d;
  }
  uws
    .App()
    // `any`, not `get`: this uWS build answers a GET from `any('/*')` before `get('/metrics')`.
    .any('/metrics', (res) => {
      publish(gc, totals, init.thread);
      const text = Buffer.from(metricsText(totals));
      res.cork(() => {
        res.writeHeader('content-type', 'text/plain; version=0.0.4').end(text);
      });
    })
    .any('/*', (res) => {
      res.cork(() => {
        res.writeHeader('content-type', 'application/json').end(body);
      });
    })
    .listen(init.host, init.port, (token) => {
      if (token === false) throw new Error(`ceiling: cannot listen on ${init.host}:${init.port}`);
    });
}

if (isMainThread) {
  const { values: a } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      bytes: { type: 'string' },
      workers: { type: 'string', default: '1' },
    },
  });
  const n = Math.max(1, Number(a.workers));
  const init = { host: a.host!, port: Number(a.port), bytes: Number(a.bytes), totals: new SharedArrayBuffer(n * GC_FIELDS * 8) };
  if (!Number.isInteger(init.port) || init.port <= 0 || !Number.isInteger(init.bytes) || init.bytes < 0) {
    throw new Error('ceiling: --port (>0) and --bytes (>=0) are required');
  }
  if (n === 1) serve({ ...init, thread: 0 });
  else for (let i = 0; i < n; i++) spawnModuleWorker(new URL(import.meta.url), { workerData: { ...init, thread: i } satisfies Init });
} else {
  serve(workerData as Init);
}
