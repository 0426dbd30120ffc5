/**
 * Issue 9's speed section: a whole backtest in one request against the ways users do it
 * today, in one run on the demo data (pemi/grid_stress, 15 zones x ~2,150 days, revisions).
 *
 * Workload: one series (DE-LU), 1,000 consecutive decision dates, 90-day windows.
 *  - walk_forward as Arrow: every page (limit 100000), decoded by apache-arrow into a Table
 *    (columns over the received buffers, as `pl.read_ipc_stream` / `tableFromIPC` users get
 *    them; DuckDB's side likewise ends with its result chunks, not JS values); and the same
 *    as JSON, parsed.
 *  - the per-date loop: one JSON request per decision date (date_from = D-90, date_to =
 *    as_of = D), 16 in flight, fetch + JSON.parse, as a backtest loop sends them today.
 *  - DuckDB in process: the same rows (every stored version, with its snapshot position)
 *    in a table, the whole walk-forward as ONE SQL query (PIT-4 by row_number over
 *    decision date and key), read back completely (runAndReadAll).
 *  - the ceiling: uWS handing out a fixed body of the Arrow answer's size (the same
 *    fetch + arrayBuffer, no decode): what the HTTP layer alone costs for those bytes.
 * Row counts must agree across all of them (the run fails otherwise).
 * Also: walk_forward over every series of the dataset and vintages of the whole dataset, in
 * rows/s and the server's peak RSS.
 *
 *   npm run bench:walk-forward [-- --repeat 5]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC, type Table } from 'apache-arrow';
import { DEMO_KEY } from '../../src/demo/ensure-demo.js';
import { startDemoServer } from '../lib/demo-server.js';
import { repoRoot } from '../lib/paths.js';
import { ceilingArgv } from '../lib/server-argv.js';
import { readMemory, spawnLogged, waitFor200 } from '../lib/proc.js';
import { loadIntoDuckDb, walkForwardSql } from './duckdb-walk-forward.js';

const log = (m: string): void => void process.stderr.write(`[walk-forward ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

const PRODUCT = 'pemi';
const DATASET = 'grid_stress';
const SERIES = 'DE-LU';
const DECISIONS = 1000;
const WINDOW = 90;
const IN_FLIGHT = 16;

interface Measure {
  readonly name: string;
  readonly rows: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly requests: number;
  readonly peakRssMiB?: number;
}

const day = (d: number): string => new Date(d * 86_400_000).toISOString().slice(0, 10);

async function get(url: string): Promise<Response> {
  const r = await fetch(url, { headers: { 'x-api-key': DEMO_KEY, 'accept-encoding': 'identity' } });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r;
}

/** Every page of a chain in Arrow, decoded with every column materialised. */
async function arrowChain(base: string, path: string): Promise<{ rows: number; bytes: number; requests: number }> {
  let rows = 0;
  let bytes = 0;
  let requests = 0;
  let cursor: string | null = null;
  do {
    const r = await get(`${base}${path}&format=arrow${cursor === null ? '' : `&cursor=${cursor}`}`);
    const body = new Uint8Array(await r.arrayBuffer());
    const t: Table = tableFromIPC(body);
    rows += t.numRows;
    bytes += body.byteLength;
    requests++;
    cursor = r.headers.get('x-next-cursor');
  } while (cursor !== null);
  return { rows, bytes, requests };
}

async function jsonChain(base: string, path: string): Promise<{ rows: number; bytes: number; requests: number }> {
  let rows = 0;
  let bytes = 0;
  let requests = 0;
  let cursor: string | undefined;
  do {
    const text = await (await get(`${base}${path}${cursor === undefined ? '' : `&cursor=${cursor}`}`)).text();
    const env = JSON.parse(text) as { data: unknown[]; next_cursor?: string };
    rows += env.data.length;
    bytes += Buffer.byteLength(text);
    requests++;
    cursor = env.next_cursor;
  } while (cursor !== undefined);
  return { rows, bytes, requests };
}

/** One JSON request per decision date, `IN_FLIGHT` at a time. */
async function perDateLoop(base: string, first: number): Promise<{ rows: number; bytes: number; requests: number }> {
  let next = 0;
  let rows = 0;
  let bytes = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < DECISIONS; i = next++) {
      const d = first + i;
      const text = await (
        await get(`${base}/${PRODUCT}/${DATASET}?bidding_zone=${SERIES}&date_from=${day(d - WINDOW)}&date_to=${day(d)}&as_of=${day(d)}&limit=10000`)
      ).text();
      rows += (JSON.parse(text) as { data: unknown[] }).data.length;
      bytes += Buffer.byteLength(text);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { rows, bytes, requests: DECISIONS };
}

/** The best of `repeat` timed runs (after one warm-up run): steady state, not first-touch. */
async function best(name: string, repeat: number, run: () => Promise<{ rows: number; bytes: number; requests: number }>, pid?: number): Promise<Measure> {
  await run();
  let m: Measure | null = null;
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    const r = await run();
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (m === null || seconds < m.seconds) m = { name, ...r, seconds };
  }
  const mem = pid === undefined ? null : readMemory(pid);
  log(`${name}: ${m!.rows} rows in ${(m!.seconds * 1000).toFixed(1)} ms`);
  return mem === null ? m! : { ...m!, peakRssMiB: mem.hwm / 1048576 };
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({ options: { repeat: { type: 'string', default: '5' } } });
  const repeat = Number(a.repeat);
  // Response cache off: every repetition is answered, not replayed.
  const demo = await startDemoServer('walk-forward', ['--response-cache-mb', '0', '--refresh-interval', '0']);
  const { base, dir, port } = demo;
  let ceiling: ReturnType<typeof spawnLogged> | null = null;
  const duck = await DuckDBInstance.create(':memory:');
  try {
    const status = await (await fetch(`${base}/${PRODUCT}/${DATASET}?bidding_zone=${SERIES}`, { headers: { 'x-api-key': DEMO_KEY } })).json();
    const lastDay = Date.parse(`${(status as { data: Array<{ date: string }> }).data[0]!.date}T00:00:00Z`) / 86_400_000;
    const first = lastDay - DECISIONS + 1;
    const wf = `/${PRODUCT}/${DATASET}/walk_forward?bidding_zone=${SERIES}&decision_from=${day(first)}&decision_to=${day(lastDay)}&window=${WINDOW}&limit=100000`;
    const wfAll = `/${PRODUCT}/${DATASET}/walk_forward?decision_from=${day(first)}&decision_to=${day(lastDay)}&window=${WINDOW}&limit=100000`;
    const vintagesAll = `/${PRODUCT}/${DATASET}/vintages?limit=100000`;

    const measures: Measure[] = [];
    measures.push(await best('walk_forward, Arrow (one series)', repeat, () => arrowChain(base, wf), demo.server.pid));
    measures.push(await best('walk_forward, JSON (one series)', repeat, () => jsonChain(base, wf)));
    measures.push(await best(`per-date JSON loop (${DECISIONS} requests, ${IN_FLIGHT} in flight)`, Math.min(repeat, 3), () => perDateLoop(base, first)));

    const conn = await duck.connect();
    const manifest = JSON.parse(await readFile(join(dir, PRODUCT, DATASET, 'manifest.json'), 'utf8')) as { object: string };
    const loaded = await loadIntoDuckDb(conn, join(dir, PRODUCT, DATASET, manifest.object), dir);
    log(`DuckDB: ${loaded.rows} stored versions loaded`);
    const sql = walkForwardSql({ series: SERIES, first: day(first), decisions: DECISIONS, window: WINDOW, floorEndUs: loaded.floorEndUs });
    measures.push(
      await best('DuckDB, one SQL query in process', repeat, async () => {
        const reader = await conn.runAndReadAll(sql);
        return { rows: reader.currentRowCount, bytes: 0, requests: 1 };
      }),
    );

    const arrow = measures[0]!;
    const counts = new Set(measures.map((m) => m.rows));
    if (counts.size !== 1) throw new Error(`row counts differ: ${measures.map((m) => `${m.name} ${m.rows}`).join(', ')}`);

    // The ceiling: the same number of requests for bodies of the same size, no decode.
    const size = Math.round(arrow.bytes / arrow.requests);
    ceiling = spawnLogged(ceilingArgv(port + 1, size, 2));
    await waitFor200(`http://127.0.0.1:${port + 1}/healthz`, ceiling, 10_000);
    const ceilingMeasure = await best(`uWS ceiling (${arrow.requests} x ${size} B fixed body)`, repeat, async () => {
      for (let i = 0; i < arrow.requests; i++) await (await fetch(`http://127.0.0.1:${port + 1}/x`)).arrayBuffer();
      return { rows: arrow.rows, bytes: size * arrow.requests, requests: arrow.requests };
    });
    await ceiling.stop();
    ceiling = null;

    const whole: Measure[] = [];
    whole.push(await best('walk_forward, Arrow, every series', Math.min(repeat, 2), () => arrowChain(base, wfAll), demo.server.pid));
    whole.push(await best('vintages, Arrow, whole dataset', Math.min(repeat, 2), () => arrowChain(base, vintagesAll), demo.server.pid));

    const md = markdown(measures, ceilingMeasure, whole, repeat);
    await writeFile(join(repoRoot(), 'bench/walk-forward/RESULTS-walk-forward.md'), md);
    await writeFile(
      join(repoRoot(), 'bench/walk-forward/RESULTS-walk-forward.json'),
      JSON.stringify({ measures, ceiling: ceilingMeasure, whole }, null, 2) + '\n',
    );
    process.stdout.write(md);
  } finally {
    await ceiling?.stop();
    duck.closeSync();
    await demo.stop();
  }
}

function markdown(ms: readonly Measure[], ceiling: Measure, whole: readonly Measure[], repeat: number): string {
  const rate = (m: Measure): number => m.rows / m.seconds;
  const arrow = ms[0]!;
  const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
  const lines = [
    '# Walk-forward in one request (issue 9)',
    '',
    `Command: \`npm run bench:walk-forward -- --repeat ${repeat}\` (best of ${repeat} after a warm-up; demo ${PRODUCT}/${DATASET}, series ${SERIES}, ${DECISIONS} decision dates, ${WINDOW}-day windows; server with every core, response cache off; the client is Node fetch in the same box).`,
    '',
    '| way | rows | requests | bytes | time (ms) | rows/s | walk_forward Arrow is |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...ms.map(
      (m) => `| ${m.name} | ${m.rows} | ${m.requests} | ${m.bytes} | ${(m.seconds * 1000).toFixed(1)} | ${fmt(rate(m))} | ${fmt(rate(arrow) / rate(m))}x |`,
    ),
    `| ${ceiling.name} | ${ceiling.rows} | ${ceiling.requests} | ${ceiling.bytes} | ${(ceiling.seconds * 1000).toFixed(1)} | ${fmt(rate(ceiling))} | ${fmt(rate(arrow) / rate(ceiling))}x |`,
    '',
    '| whole dataset | rows | requests | bytes | time (ms) | rows/s | server peak RSS (MiB) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...whole.map(
      (m) => `| ${m.name} | ${m.rows} | ${m.requests} | ${m.bytes} | ${(m.seconds * 1000).toFixed(1)} | ${fmt(rate(m))} | ${m.peakRssMiB?.toFixed(0) ?? ''} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`${String((e as Error).stack ?? e)}\n`);
  process.exit(1);
});
