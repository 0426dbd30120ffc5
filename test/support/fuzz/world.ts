import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSource } from '../../../src/source/local-source.js';
import { DEMO_ADMIN_KEY, DEMO_DATASETS, DEMO_EU_KEY, DEMO_KEY, DEMO_SEED, demoKeysConfig, ensureDemoData } from '../../../src/demo/index.js';
import { createLogger, type LogSink } from '../../../src/log/logger.js';
import { PAGE_SLOT_COST } from '../../../src/format/arenas/page-arena.js';
import { startServer, type RunningServer } from '../../../src/threads/start.js';
import { systemClock } from '../../../src/time/clock.js';
import { TEST_SERVER } from '../harness.js';
import { rawRequest, type RawReply } from '../raw-http.js';
import type { CursorSample, FuzzDataset, FuzzWorld } from './requests.js';

/**
 * The fuzz test's server: the demo data set (generated once into the temp folder, as
 * `serve --demo` does, then reused) served by a real uWS server on an ephemeral port, and
 * what the generator draws from, read from that server: its OpenAPI document's endpoints
 * and parameters, each dataset's columns and series, real cursors and ETags.
 */
export interface FuzzServer {
  readonly port: number;
  readonly world: FuzzWorld;
  /** log lines at level error (a 500 logs one) */
  readonly errors: string[];
  close(): Promise<void>;
}

/** Lines at level error, kept. */
class ErrorLines implements LogSink {
  readonly lines: string[] = [];
  write(chunk: string): void {
    for (const line of chunk.split('\n')) if (line.includes('"level":"error"')) this.lines.push(line);
  }
}

const TIMEOUT_MS = 20_000;

export async function startFuzzServer(): Promise<FuzzServer> {
  const dir = join(tmpdir(), `pitcache-fuzz-demo-${DEMO_SEED}`);
  const sink = new ErrorLines();
  const log = createLogger({ sink, clock: systemClock });
  await ensureDemoData(dir, createLogger({ sink: { write() {} }, clock: systemClock }));
  const server: RunningServer = await startServer({
    ...TEST_SERVER,
    source: new LocalSource(dir),
    keys: demoKeysConfig(),
    host: '127.0.0.1',
    port: 0,
    clock: systemClock,
    log,
    build: 'inline',
    refreshIntervalMs: 0,
    // Every cache on and small, so generated input goes through them and their evictions too.
    responseCacheBytes: 1024 * 1024,
    rowCacheBytes: 256 * 1024,
    pageCacheBytes: 2 * PAGE_SLOT_COST,
  });
  try {
    const world = await readWorld(server.port);
    return { port: server.port, world, errors: sink.lines, close: () => server.close() };
  } catch (e) {
    await server.close();
    throw e;
  }
}

async function get(port: number, target: string, key = DEMO_KEY): Promise<RawReply> {
  const r = await rawRequest(port, { method: 'GET', target, headers: [['x-api-key', key]] }, TIMEOUT_MS);
  if (r.status !== 200) throw new Error(`GET ${target}: ${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
  return r;
}

interface OpenApiParameter {
  readonly name: string;
  readonly in: string;
}

/** What the generator draws from, read from the server on `port` (serving the demo data set with the demo keys). */
export async function readWorld(port: number): Promise<FuzzWorld> {
  const doc = JSON.parse((await get(port, '/openapi.json')).body.toString('utf8')) as {
    paths: Record<string, Record<string, { parameters?: Array<OpenApiParameter | { $ref: string }> }>>;
    components: { parameters: Record<string, OpenApiParameter> };
  };
  const resolve = (p: OpenApiParameter | { $ref: string }): OpenApiParameter => ('$ref' in p ? doc.components.parameters[p.$ref.split('/').pop()!]! : p);
  const dataEndpoints: Array<{ suffix: string; params: string[] }> = [];
  const fixedPaths: Array<{ path: string; method: string }> = [];
  const headerParams = new Set<string>();
  // The document has a path per dataset and endpoint (the catalog in force); the endpoints
  // are read from one dataset's paths, and the filter parameters are each dataset's own (below).
  const first = `/${DEMO_DATASETS[0]!.productId}/${DEMO_DATASETS[0]!.dataset}`;
  const datasetBases = DEMO_DATASETS.map((d) => `/${d.productId}/${d.dataset}`);
  const filterNames = new Set(DEMO_DATASETS.flatMap((d) => d.keyColumns.map((k) => k.name)));
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters ?? []).map(resolve);
      for (const p of params) if (p.in === 'header') headerParams.add(p.name.toLowerCase());
      const base = datasetBases.find((b) => path === b || path.startsWith(`${b}/`));
      if (base === undefined) fixedPaths.push({ path, method: method.toUpperCase() });
      else if (base === first) {
        const suffix = path.slice(base.length);
        dataEndpoints.push({ suffix, params: params.filter((p) => p.in === 'query' && !filterNames.has(p.name)).map((p) => p.name) });
      }
    }
  }
  if (dataEndpoints.length === 0) throw new Error(`/openapi.json has no path under ${first}`);
  const datasets: FuzzDataset[] = [];
  for (const def of DEMO_DATASETS) {
    const base = `/${def.productId}/${def.dataset}`;
    const rows = (JSON.parse((await get(port, `${base}?limit=10000`)).body.toString('utf8')) as { data: Array<Record<string, unknown>> }).data;
    const filters = new Map<string, string[]>();
    for (const k of def.keyColumns) filters.set(k.name, [...new Set(rows.map((r) => String(r[k.name])))].slice(0, 8));
    datasets.push({ productId: def.productId, dataset: def.dataset, columns: Object.keys(rows[0] ?? {}), filters });
  }
  const { cursors, etags } = await chains(port, datasets);
  return {
    dataEndpoints,
    fixedPaths,
    headerParams: [...headerParams],
    datasets,
    cursors,
    etags,
    keys: { main: DEMO_KEY, others: [DEMO_EU_KEY, DEMO_ADMIN_KEY] },
  };
}

/** A second page's cursor of each endpoint of each dataset (and the ETags of those first pages). */
async function chains(port: number, datasets: readonly FuzzDataset[]): Promise<{ cursors: CursorSample[]; etags: string[] }> {
  const queries: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
    [
      '',
      [
        ['latest', 'false'],
        ['limit', '2'],
      ],
    ],
    [
      '',
      [
        ['as_of', '2026-03-01'],
        ['latest', 'false'],
        ['limit', '3'],
        ['format', 'csv'],
      ],
    ],
    [
      '/walk_forward',
      [
        ['decision_from', '2026-03-01'],
        ['decision_to', '2026-03-10'],
        ['window', '30'],
        ['limit', '3'],
      ],
    ],
    [
      '/vintages',
      [
        ['date_from', '2026-01-01'],
        ['date_to', '2026-03-10'],
        ['limit', '3'],
      ],
    ],
  ];
  const cursors: CursorSample[] = [];
  const etags: string[] = [];
  for (const d of datasets) {
    for (const [suffix, query] of queries) {
      const path = `/${d.productId}/${d.dataset}${suffix}`;
      const r = await get(port, `${path}?${query.map(([n, v]) => `${n}=${v}`).join('&')}`);
      const cursor = r.headers.get('x-next-cursor')?.[0];
      if (cursor !== undefined) cursors.push({ path, query, cursor });
      const etag = r.headers.get('etag')?.[0];
      if (etag !== undefined) etags.push(etag);
    }
  }
  if (cursors.length === 0) throw new Error('no page chain of the demo data has a second page');
  return { cursors, etags };
}
