/**
 * pitcache's own handler (createApiHandler over a loaded registry) served through node:http
 * instead of uWebSockets.js: the difference in the benchmark is what the HTTP layer is worth.
 * Same flags as `pitcache serve` (parsed by the same code); one thread.
 *
 *   node dist/bench/servers/node-http-server.js --source DIR --keys FILE --port P
 *
 * The wiring follows src/threads/start.ts, with the transport swapped. (A `listen` seam in
 * StartOptions would let this file call startServer itself.)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { openSource, readLocation } from '../../src/source/open-source.js';
import { KeyRegistry } from '../../src/auth/key-registry.js';
import { loadKeysFile } from '../../src/auth/keys-file.js';
import { RateLimiter } from '../../src/auth/rate-limiter.js';
import { parseServeConfig } from '../../src/config/serve-config.js';
import { resolveServeOptions } from '../../src/config/serve-options.js';
import { headerBlockPairs } from '../../src/http/header-block.js';
import { recordIdText } from '../../src/http/record-id.js';
import type { Handler, HttpRequest, HttpResponse } from '../../src/http/types.js';
import { createLogger } from '../../src/log/logger.js';
import { createAdminOps } from '../../src/api/admin.js';
import { createApiHandler } from '../../src/api/api-handler.js';
import { DatasetRegistry } from '../../src/generations/dataset-registry.js';
import { RequestIds } from '../../src/api/request-ids.js';
import { SnapshotLoader } from '../../src/generations/snapshot-loader.js';
import { WorkerTableBuilder } from '../../src/generations/table-builder.js';
import { realTimers } from '../../src/time/timers.js';
import { systemClock } from '../../src/time/clock.js';

async function main(): Promise<number> {
  const parsed = parseServeConfig(process.argv.slice(2), process.env);
  if (!parsed.ok || parsed.config.data.mode !== 'source') {
    process.stderr.write(`node-http-server: ${parsed.ok ? '--source and --keys are required' : parsed.message}\n`);
    return 2;
  }
  const config = parsed.config;
  const data = parsed.config.data;
  const log = createLogger({ level: config.logLevel });
  const keysConfig = await loadKeysFile(data.keys, async (l) => Buffer.from(await readLocation(l, config.s3)).toString('utf8'));
  const registry = new DatasetRegistry();
  const keys = new KeyRegistry(keysConfig);
  const builder = new WorkerTableBuilder();
  const loader = new SnapshotLoader({
    source: openSource(data.source, config.s3),
    registry,
    builder,
    clock: systemClock,
    timers: realTimers,
    log,
    refreshIntervalMs: config.refreshIntervalMs,
    startupTimeoutMs: config.startupTimeoutMs,
    cache: null,
  });
  const handler = createApiHandler({
    registry,
    keys,
    limiter: new RateLimiter(keys, systemClock),
    clock: systemClock,
    ids: new RequestIds(),
    log,
    admin: createAdminOps(registry, loader, () => Promise.resolve('# this benchmark server keeps no metrics\n')),
    // The same caches as `pitcache serve` with these flags, one thread: only the HTTP layer differs.
    options: resolveServeOptions({ ...config, workers: 1 }),
  });
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => serve(handler, req, res));
  await new Promise<void>((done) => server.listen(config.port, config.host, done));
  log.info('listening (node:http)', { host: config.host, port: config.port });
  await loader.start();
  log.info('ready');
  await new Promise<void>((done) => {
    const stop = (): void => {
      loader.stop();
      server.close();
      server.closeAllConnections();
      void builder.close().then(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

function serve(handler: Handler, req: IncomingMessage, res: ServerResponse): void {
  // Bodies are never read; drain them so keep-alive connections stay usable.
  req.resume();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const key = req.headers['x-api-key'];
  const request: HttpRequest = {
    method: req.method ?? 'GET',
    path: q < 0 ? url : url.slice(0, q),
    rawQuery: q < 0 ? '' : url.slice(q + 1),
    apiKey: typeof key === 'string' && key !== '' ? key : null,
    accept: req.headers.accept ?? '',
    acceptEncoding: req.headers['accept-encoding'] ?? '',
    ifNoneMatch: req.headers['if-none-match'] ?? '',
  };
  let out: HttpResponse | Promise<HttpResponse>;
  try {
    out = handler(request);
  } catch {
    fail(res);
    return;
  }
  if (out instanceof Promise)
    out.then(
      (r) => write(res, r, request.method === 'HEAD'),
      () => fail(res),
    );
  else write(res, out, request.method === 'HEAD');
}

function write(res: ServerResponse, r: HttpResponse, head: boolean): void {
  res.statusCode = r.status;
  for (const [name, value] of r.headers) res.setHeader(name, value);
  if (r.headerBlock !== undefined && r.headerBlock !== null) for (const [name, value] of headerBlockPairs(r.headerBlock)) res.setHeader(name, value);
  res.setHeader('content-type', r.contentType);
  res.setHeader('x-request-id', recordIdText(r.requestId));
  res.setHeader('content-length', r.body.byteLength);
  // The handler reuses its body buffer: node may keep a reference after end(), so copy.
  res.end(head ? undefined : Buffer.from(r.body));
}

function fail(res: ServerResponse): void {
  res.statusCode = 500;
  res.setHeader('content-type', 'application/json');
  res.end('{"error":{"status":500,"code":"internal_error","message":"internal server error"}}');
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`node-http-server: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
