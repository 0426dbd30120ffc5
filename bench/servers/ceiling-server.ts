/**
 * The ceiling (issue 11.1): uWebSockets.js answering every request with one fixed body of
 * the workload's mean answer size, on N threads sharing one port (SO_REUSEPORT, as
 * src/server/serving-pool.ts does). No lookup, no encoding: what is left is HTTP + bytes,
 * the most any handler on this stack could reach on this machine.
 *
 *   node ceiling-server.js --port P --bytes B [--workers N] [--host 127.0.0.1]
 */
import { parseArgs } from 'node:util';
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import { loadNativeUws } from '../../src/http/native-uws.js';

interface Init {
  readonly host: string;
  readonly port: number;
  readonly bytes: number;
}

function serve(init: Init): void {
  const uws = loadNativeUws();
  // JSON-looking filler, built once: every answer is the same preallocated buffer.
  const body = Buffer.alloc(init.bytes, 0x20);
  if (init.bytes >= 2) {
    body[0] = 0x7b;
    body[init.bytes - 1] = 0x7d;
  }
  uws
    .App()
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
  const init: Init = { host: a.host!, port: Number(a.port), bytes: Number(a.bytes) };
  if (!Number.isInteger(init.port) || init.port <= 0 || !Number.isInteger(init.bytes) || init.bytes < 0) {
    throw new Error('ceiling: --port (>0) and --bytes (>=0) are required');
  }
  const n = Number(a.workers);
  if (n <= 1) serve(init);
  else for (let i = 0; i < n; i++) new Worker(new URL(import.meta.url), { workerData: init });
} else {
  serve(workerData as Init);
}
