/**
 * Issue 37's speed section: 1,000,000 events (random series and instants) joined point in
 * time over a dataset of about 3 million row-versions, in one run, as ratios.
 *
 *  - pitcache: a built server in its own process; the events as an Arrow table, written as
 *    an Arrow stream body, POSTed to asof_join, the Arrow answer decoded by apache-arrow
 *    (request start to Table).
 *  - DuckDB in process: the same row-versions (with their snapshot positions) in a table,
 *    the events appended, and the same answer in ONE SQL query under contract 1's
 *    bitemporal rule: a version is visible at T when its threshold (effective, or
 *    max(effective, observed) when observed after the floor) is <= T; the answer of an
 *    event is the greatest (date, observed, ingested, position) among its series' visible
 *    versions: a running max over the series' versions in threshold order, ASOF-joined on
 *    the threshold.
 *  - polars in process (nodejs-polars, one lazy plan): the same rule, join_asof by series.
 *  - the p99 of small GET requests (one series at one as_of), sent from a worker thread
 *    while each join runs on the same serving thread (--workers 1), against the same
 *    requests with nothing else running; with --before-cli, the same during the joins of
 *    another build's server (the one before joins moved off the serving thread).
 * Answers are compared event by event (date and value) before anything is timed. Each
 * engine's time is from the events in its own form (an Arrow table, a DuckDB table, a polars
 * DataFrame) to the answer in columns; making that form from the bench's JS arrays is timed
 * apart (`*_prep_ms`), and the ratios are given both without and with it.
 *
 *   npm run bench:asof-join [-- --rounds 3 --events 1000000]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';
import pl from 'nodejs-polars';
import { Dictionary, Int32, Table, TimestampMicrosecond, Utf8, makeData, makeVector, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { buildArrowSnapshot } from '../../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../../src/snapshot/write-generation.js';
import { LocalSource } from '../../src/source/local-source.js';
import { cliPath } from '../lib/paths.js';
import { serveArgv } from '../lib/server-argv.js';
import { freePort, spawnLogged, waitFor200 } from '../lib/proc.js';

const log = (m: string): void => void process.stderr.write(`[asof-join ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '1000000' },
    out: { type: 'string' },
    /** another build's dist/src/cli/main.js: its server is measured beside this one (small requests during its joins) */
    'before-cli': { type: 'string' },
    /** serving threads of the servers: 1 (default) puts the small requests on the join's thread */
    workers: { type: 'string', default: '1' },
    /** DuckDB's query: rank (default) or struct (the first version) */
    sql: { type: 'string', default: 'rank' },
    /** a folder: the server runs with --cpu-prof into it, and only pitcache joins run (2), each step timed */
    profile: { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);
const EVENTS = Number(args.events);
const KEY = 'bench-key';
const SERIES = 2000;
const DAYS = 1000;
const DAY_US = 86_400_000_000;
/** gbsi_eu's vintage floor, 2026-01-13 (the built-in catalog): the first 30 days of data lie before it */
const FLOOR_DAY = 20_466;
const FIRST_DAY = FLOOR_DAY - 30;
const FLOOR_US = (FLOOR_DAY + 1) * DAY_US - 1;

/** A deterministic generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

interface Rows {
  n: number;
  country: string[];
  date: Int32Array;
  eff: Float64Array;
  obs: Float64Array;
  ing: Float64Array;
  value: Float64Array;
}

function makeRows(): Rows {
  const r = rng(37);
  const cap = SERIES * DAYS * 2;
  const rows: Rows = {
    n: 0,
    country: [],
    date: new Int32Array(cap),
    eff: new Float64Array(cap),
    obs: new Float64Array(cap),
    ing: new Float64Array(cap),
    value: new Float64Array(cap),
  };
  const add = (c: string, d: number, obs: number, v: number): void => {
    const i = rows.n++;
    rows.country.push(c);
    rows.date[i] = d;
    rows.eff[i] = d * DAY_US;
    rows.obs[i] = obs;
    rows.ing[i] = obs + 1_000_000;
    rows.value[i] = v;
  };
  for (let s = 0; s < SERIES; s++) {
    const c = `C${String(s).padStart(4, '0')}`;
    for (let d = FIRST_DAY; d < FIRST_DAY + DAYS; d++) {
      const first = (d + 1) * DAY_US + Math.floor(r() * 20 * 3_600_000_000);
      add(c, d, first, Math.round(r() * 1e6) / 1e3);
      if (r() < 0.5) add(c, d, first + Math.floor(1 + r() * 30) * DAY_US + Math.floor(r() * DAY_US), Math.round(r() * 1e6) / 1e3);
    }
  }
  return rows;
}

interface Events {
  country: string[];
  atUs: Float64Array;
}

function makeEvents(n: number): Events {
  const r = rng(1937);
  const country: string[] = new Array<string>(n);
  const atUs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = Math.floor(r() * SERIES * 1.01);
    country[i] = `C${String(s).padStart(4, '0')}`; // about 1% of series unknown
    atUs[i] = (FIRST_DAY - 5) * DAY_US + Math.floor(r() * (DAYS + 40) * DAY_US);
  }
  return { country, atUs };
}

/**
 * The events as an Arrow table: `at` a Timestamp µs, `country` a Dictionary<Utf8> (each
 * distinct series name once, an int32 index per event: how a client holds a column of a few
 * thousand distinct values; the server reads the index and not a million strings).
 */
function eventsTable(e: Events): Table {
  const codeOf = new Map<string, number>();
  const names: string[] = [];
  const index = new Int32Array(e.country.length);
  for (let i = 0; i < index.length; i++) {
    const c = e.country[i]!;
    let code = codeOf.get(c);
    if (code === undefined) {
      code = names.length;
      names.push(c);
      codeOf.set(c, code);
    }
    index[i] = code;
  }
  const type = new Dictionary(new Utf8(), new Int32());
  return new Table({
    at: makeVector({ type: new TimestampMicrosecond('UTC'), data: BigInt64Array.from(e.atUs, (x) => BigInt(x)) } as never),
    country: makeVector(makeData({ type, length: index.length, nullCount: 0, data: index, dictionary: vectorFromArray(names, new Utf8()) })),
  });
}

/** Where a pitcache join's time went, client side (--profile): ms from its start to the end of each step. */
const steps: Record<string, number> = {};

/** The columns the bench reads of an answer (each event's row), as DuckDB's and polars' sides read theirs. */
const READ = ['date', 'stress_index'];

/**
 * One join: the events' Arrow stream written, POSTed, the answer read and decoded with the
 * columns the bench reads (date, stress_index) read out (the join's time ends there); then
 * the answer's other columns (the events' own `at` and `country`, `floor_applied`) read out
 * too, timed apart (`allMs`: to every column read out).
 */
async function pitcacheJoin(base: string, events: Table, t0 = performance.now()): Promise<{ table: Table; ms: number; allMs: number }> {
  const body = tableToIPC(events, 'stream');
  steps.ipc_written = performance.now() - t0;
  // A keep-alive socket idle past uWS's timeout is closed by the server, and a POST is not
  // retried on a fresh one: a GET first takes (and, failing, replaces) the stale socket.
  await fetch(`${base}/healthz`).then(
    (r) => r.arrayBuffer(),
    () => fetch(`${base}/healthz`).then((r) => r.arrayBuffer()),
  );
  const res = await fetch(`${base}/gbsi_eu/system_stress/asof_join?columns=stress_index&format=arrow`, {
    method: 'POST',
    body,
    headers: { 'x-api-key': KEY, 'content-type': 'application/vnd.apache.arrow.stream', 'accept-encoding': 'identity' },
  });
  steps.answer_headers = performance.now() - t0;
  if (res.status !== 200) throw new Error(`asof_join: ${res.status} ${await res.text()}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  steps.answer_read = performance.now() - t0;
  const table = tableFromIPC(bytes);
  for (const name of READ) table.getChild(name)!.toArray();
  const ms = performance.now() - t0;
  steps.table = ms;
  for (const f of table.schema.fields) if (!READ.includes(f.name)) table.getChild(f.name)!.toArray();
  const allMs = performance.now() - t0;
  steps.every_column = allMs;
  return { table, ms, allMs };
}

/**
 * Each version's rank in its series by (date, observed, ingested, position) (an integer), the
 * running max of that rank in threshold order, one row per (series, threshold), the version
 * of that rank looked up, and the events ASOF-joined on the threshold. An integer running max
 * instead of one over a struct (the first version of this query, `--sql struct`) makes
 * DuckDB's side about 20x faster for the same answer.
 */
const JOIN_SQL_RANK = `
WITH v AS (
  SELECT country, date, stress_index,
         CASE WHEN obs <= ${FLOOR_US} THEN eff ELSE greatest(eff, obs) END AS thr,
         row_number() OVER (PARTITION BY country ORDER BY date, obs, ing, pos) AS rk
  FROM rows
), run AS (
  SELECT country, thr, max(max(rk)) OVER (PARTITION BY country ORDER BY thr ROWS UNBOUNDED PRECEDING) AS best
  FROM v GROUP BY country, thr
), best AS (
  SELECT run.country, run.thr, v.date, v.stress_index FROM run JOIN v ON v.country = run.country AND v.rk = run.best
)
SELECT e.i, best.date AS date, best.stress_index AS value
FROM events e ASOF LEFT JOIN best ON e.country = best.country AND best.thr <= e.at_us
ORDER BY e.i`;

const JOIN_SQL_STRUCT = `
WITH v AS (
  SELECT country, date, obs, ing, pos, stress_index,
         CASE WHEN obs <= ${FLOOR_US} THEN eff ELSE greatest(eff, obs) END AS thr
  FROM rows
), best AS (
  SELECT DISTINCT country, thr,
         max({'date': date, 'obs': obs, 'ing': ing, 'pos': pos}) OVER w AS b,
         arg_max(stress_index, {'date': date, 'obs': obs, 'ing': ing, 'pos': pos}) OVER w AS value
  FROM v
  WINDOW w AS (PARTITION BY country ORDER BY thr RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT e.i, best.b.date AS date, best.value AS value
FROM events e ASOF LEFT JOIN best ON e.country = best.country AND best.thr <= e.at_us
ORDER BY e.i`;

const JOIN_SQL = args.sql === 'struct' ? JOIN_SQL_STRUCT : JOIN_SQL_RANK;

async function main(): Promise<void> {
  log(`making ${SERIES} series x ${DAYS} days of row-versions`);
  const rows = makeRows();
  log(`${rows.n} row-versions; ${EVENTS} events`);
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-asof-bench-'));
  const snapshot = buildArrowSnapshot(
    {
      seriesKey: ['country'],
      columns: [
        { name: 'date', type: 'date32', values: rows.date.subarray(0, rows.n) },
        { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: rows.eff.subarray(0, rows.n) },
        { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: rows.obs.subarray(0, rows.n) },
        { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: rows.ing.subarray(0, rows.n) },
        { name: 'model_version', type: 'utf8', values: new Array<string>(rows.n).fill('1.0') },
        { name: 'country', type: 'dict-utf8', values: rows.country },
        { name: 'stress_index', type: 'float64', values: rows.value.subarray(0, rows.n) },
      ],
    },
    'stream',
  );
  await writeGeneration(new LocalSource(dir), { productId: 'gbsi_eu', dataset: 'system_stress' }, snapshot, 1, '2026-11-29T00:00:00Z');
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ keys: [{ id: 'bench', key: KEY, products: ['*'] }] }));
  const serveFlags = ['--workers', args.workers!];
  const port = await freePort();
  const argv = serveArgv(cliPath(), dir, port, serveFlags);
  if (args.profile !== undefined) argv.splice(1, 0, '--cpu-prof', `--cpu-prof-dir=${resolve(args.profile)}`);
  const server = spawnLogged(argv);
  const base = `http://127.0.0.1:${port}`;
  // The other build (--before-cli), on the same folder: small requests during its joins, paired with this build's.
  const beforePort = args['before-cli'] === undefined ? null : await freePort();
  const before = beforePort === null ? null : spawnLogged(serveArgv(resolve(args['before-cli']!), dir, beforePort, serveFlags));
  const beforeBase = `http://127.0.0.1:${beforePort ?? 0}`;
  serverOutput = () => server.output() + (before === null ? '' : `\n(before) ${before.output()}`);
  try {
    await waitFor200(`${base}/readyz`, server, 600_000);
    if (before !== null) await waitFor200(`${beforeBase}/readyz`, before, 600_000);
    log('server ready');
    const events = makeEvents(EVENTS);
    const table = eventsTable(events);
    if (args.profile !== undefined) {
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now();
        const t = (await pitcacheJoin(base, eventsTable(events), t0)).table;
        log(
          `pitcache join ${i}: ${(performance.now() - t0).toFixed(0)} ms, ${t.numRows} rows; steps (ms from start) ${JSON.stringify(steps, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`,
        );
      }
      return;
    }

    log('DuckDB: loading the rows');
    const duck = await DuckDBInstance.create(':memory:');
    const con = await duck.connect();
    await con.run('CREATE TABLE rows (country VARCHAR, date INTEGER, eff BIGINT, obs BIGINT, ing BIGINT, pos INTEGER, stress_index DOUBLE)');
    const app = await con.createAppender('rows');
    for (let i = 0; i < rows.n; i++) {
      app.appendVarchar(rows.country[i]!);
      app.appendInteger(rows.date[i]!);
      app.appendBigInt(BigInt(rows.eff[i]!));
      app.appendBigInt(BigInt(rows.obs[i]!));
      app.appendBigInt(BigInt(rows.ing[i]!));
      app.appendInteger(i);
      app.appendDouble(rows.value[i]!);
      app.endRow();
    }
    app.closeSync();
    void DuckDBTimestampValue;

    const duckJoin = async (): Promise<{ date: Int32Array; value: Float64Array; nulls: Uint8Array }> => {
      const t0 = performance.now();
      await con.run('CREATE OR REPLACE TABLE events (i INTEGER, country VARCHAR, at_us BIGINT)');
      const ev = await con.createAppender('events');
      for (let i = 0; i < EVENTS; i++) {
        ev.appendInteger(i);
        ev.appendVarchar(events.country[i]!);
        ev.appendBigInt(BigInt(events.atUs[i]!));
        ev.endRow();
      }
      ev.closeSync();
      lastPrepMs = performance.now() - t0;
      const reader = await con.runAndReadAll(JOIN_SQL);
      const cols = reader.getColumns();
      const date = new Int32Array(EVENTS);
      const value = new Float64Array(EVENTS);
      const nulls = new Uint8Array(EVENTS);
      const d = cols[1]!;
      const v = cols[2]!;
      for (let i = 0; i < EVENTS; i++) {
        if (d[i] === null || d[i] === undefined) nulls[i] = 1;
        else {
          date[i] = Number(d[i]);
          value[i] = Number(v[i]);
        }
      }
      return { date, value, nulls };
    };

    log('polars: loading the rows');
    const plRows = pl.DataFrame({
      country: rows.country,
      date: pl.Series('date', rows.date.subarray(0, rows.n)),
      eff: pl.Series('eff', rows.eff.subarray(0, rows.n)),
      obs: pl.Series('obs', rows.obs.subarray(0, rows.n)),
      ing: pl.Series('ing', rows.ing.subarray(0, rows.n)),
      pos: pl.Series(
        'pos',
        Int32Array.from({ length: rows.n }, (_, i) => i),
      ),
      stress_index: pl.Series('stress_index', rows.value.subarray(0, rows.n)),
    });
    /**
     * The same rule in polars (lazy, one plan): each version's rank in its series by (date,
     * observed, ingested, position), its running max in threshold order per series, one row
     * per (series, threshold), the version of that rank joined back, and the events
     * join_asof'ed (backward, by series) on the threshold.
     */
    const polarsJoin = (): { date: Int32Array; value: Float64Array; nulls: Uint8Array } => {
      const t0 = performance.now();
      const ev = pl.DataFrame({
        i: pl.Series(
          'i',
          Int32Array.from({ length: EVENTS }, (_, i) => i),
        ),
        country: events.country,
        at: pl.Series('at', events.atUs),
      });
      lastPrepMs = performance.now() - t0;
      const v = plRows
        .lazy()
        .withColumns(
          pl
            .when(pl.col('obs').ltEq(FLOOR_US))
            .then(pl.col('eff'))
            .otherwise(pl.maxHorizontal([pl.col('eff'), pl.col('obs')]))
            .alias('thr'),
        )
        .sort(['country', 'date', 'obs', 'ing', 'pos'])
        .withColumns(pl.col('pos').cumCount().over('country').alias('rk'));
      const best = v
        .sort(['country', 'thr'])
        .withColumns(pl.col('rk').cumMax().over('country').alias('best'))
        .groupBy(['country', 'thr'])
        .agg(pl.col('best').max())
        .join(v.select('country', 'rk', 'date', 'stress_index'), { leftOn: ['country', 'best'], rightOn: ['country', 'rk'] })
        .sort('thr');
      const out = ev.lazy().sort('at').joinAsof(best, { leftOn: 'at', rightOn: 'thr', by: 'country', strategy: 'backward' }).sort('i').collectSync();
      const d = out.getColumn('date').toArray() as Array<number | null>;
      const val = out.getColumn('stress_index').toArray() as Array<number | null>;
      const date = new Int32Array(EVENTS);
      const value = new Float64Array(EVENTS);
      const nulls = new Uint8Array(EVENTS);
      for (let i = 0; i < EVENTS; i++) {
        if (d[i] === null || d[i] === undefined) nulls[i] = 1;
        else {
          date[i] = d[i]!;
          value[i] = val[i]!;
        }
      }
      return { date, value, nulls };
    };

    log('checking the answers agree, event by event');
    const p = (await pitcacheJoin(base, table)).table;
    const pDate = p.getChild('date')!;
    const pValue = p.getChild('stress_index')!;
    let matched = 0;
    for (const [who, other] of [
      ['DuckDB', await duckJoin()],
      ['polars', polarsJoin()],
    ] as const) {
      matched = 0;
      for (let i = 0; i < EVENTS; i++) {
        const pd = pDate.get(i) as number | null;
        const day = pd === null ? null : Math.round(pd / 86_400_000);
        const dd = other.nulls[i] === 1 ? null : other.date[i]!;
        const pv = pValue.get(i) as number | null;
        const dv = other.nulls[i] === 1 ? null : other.value[i]!;
        if (day !== dd || pv !== dv) throw new Error(`event ${i} (${events.country[i]} at ${events.atUs[i]}): pitcache ${day} ${pv}, ${who} ${dd} ${dv}`);
        if (day !== null) matched++;
      }
      log(`answers equal to ${who}'s (${matched} of ${EVENTS} events found a row)`);
    }

    /**
     * Small as_of requests (one series at one instant) sent one after another from a worker
     * thread on one keep-alive connection until `stop` is set (at least `minMs`): with one
     * serving thread they share the join's thread.
     */
    const prober = (at: string, stop: Int32Array, minMs: number): Promise<number[]> =>
      new Promise((resolve, reject) => {
        const w = new Worker(
          `const { workerData, parentPort } = require('node:worker_threads');
           (async () => { const lat = []; const end = Date.now() + workerData.minMs; let i = 0;
             while (Date.now() < end || Atomics.load(workerData.stop, 0) === 0) { const t = performance.now();
               const r = await fetch(workerData.base + '/gbsi_eu/system_stress?country=C' + String((i++ * 7919) % 2000).padStart(4, '0') + '&as_of=2026-0' + (1 + (i % 9)) + '-15T12:00:00Z', { headers: { 'x-api-key': workerData.key } });
               await r.arrayBuffer(); if (r.status !== 200) throw new Error('small request: ' + r.status); lat.push(performance.now() - t); }
             parentPort.postMessage(lat); })();`,
          { eval: true, workerData: { base: at, key: KEY, stop, minMs } },
        );
        w.once('message', resolve);
        w.once('error', reject);
      });
    const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? NaN;
    /**
     * A join on `at` with nothing else asked of that server: its time (the ratios' number),
     * to every column read out, and the events' preparation.
     */
    const joinAlone = async (at: string): Promise<{ ms: number; allMs: number; prep: number }> => {
      const tp = performance.now();
      const input = eventsTable(events);
      const prep = performance.now() - tp;
      const r = await pitcacheJoin(at, input);
      return { ms: r.ms, allMs: r.allMs, prep };
    };
    /**
     * Another join on `at` with small requests on the same server while it runs: their
     * latencies (and the join's time under that load, not in the ratios: the prober's thread
     * and the server's answers to it share the cores with the join, which DuckDB's and
     * polars' runs do not).
     */
    const joinWithProbe = async (at: string): Promise<{ ms: number; small: number[] }> => {
      const input = eventsTable(events);
      const stop = new Int32Array(new SharedArrayBuffer(4));
      const probe = prober(at, stop, 0);
      const r = await pitcacheJoin(at, input);
      Atomics.store(stop, 0, 1);
      return { ms: r.ms, small: await probe };
    };

    const quiet = await prober(base, new Int32Array(new SharedArrayBuffer(4)).fill(1), 3000);
    const pTimes: number[] = [];
    const dTimes: number[] = [];
    const bTimes: number[] = [];
    const lTimes: number[] = [];
    /** to every column of the answer read out (pitcache, before) */
    const pAll: number[] = [];
    const bAll: number[] = [];
    /** the joins with small requests alongside */
    const pProbed: number[] = [];
    const bProbed: number[] = [];
    /** each engine's input preparation (events from JS arrays into its own form), apart from the join */
    const pPrep: number[] = [];
    const dPrep: number[] = [];
    const lPrep: number[] = [];
    const bPrep: number[] = [];
    let during: number[] = [];
    let duringBefore: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // alternating: pitcache then DuckDB (then the other build), then the other way round
      const order = round % 2 === 0 ? ['p', 'd', 'l', 'b'] : ['b', 'l', 'd', 'p'];
      for (const who of order) {
        if (who === 'b' && before === null) continue;
        const t0 = performance.now();
        if (who === 'p' || who === 'b') {
          const at = who === 'p' ? base : beforeBase;
          const r = await joinAlone(at);
          const q = await joinWithProbe(at);
          (who === 'p' ? pTimes : bTimes).push(r.ms);
          (who === 'p' ? pAll : bAll).push(r.allMs);
          (who === 'p' ? pPrep : bPrep).push(r.prep);
          (who === 'p' ? pProbed : bProbed).push(q.ms);
          if (who === 'p') during = during.concat(q.small);
          else duringBefore = duringBefore.concat(q.small);
          log(
            `round ${round} ${who === 'p' ? 'pitcache' : 'before'}: ${r.ms.toFixed(0)} ms (${r.allMs.toFixed(0)} to every column; + ${r.prep.toFixed(0)} ms to make the events' Arrow table); with small requests: ${q.ms.toFixed(0)} ms, ${q.small.length} small requests meanwhile, p99 ${p99(q.small).toFixed(1)} ms`,
          );
        } else if (who === 'l') {
          polarsJoin();
          lTimes.push(performance.now() - t0 - lastPrepMs);
          lPrep.push(lastPrepMs);
          log(`round ${round} polars: ${lTimes.at(-1)!.toFixed(0)} ms (+ ${lastPrepMs.toFixed(0)} ms to make the events' DataFrame)`);
        } else {
          await duckJoin();
          dTimes.push(performance.now() - t0 - lastPrepMs);
          dPrep.push(lastPrepMs);
          log(`round ${round} DuckDB: ${dTimes.at(-1)!.toFixed(0)} ms (+ ${lastPrepMs.toFixed(0)} ms to append the events)`);
        }
      }
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const pm = median(pTimes);
    const dm = median(dTimes);
    const max = (xs: number[]): number => xs.reduce((a, b) => Math.max(a, b), -Infinity);
    const result = {
      when: new Date().toISOString(),
      rows: rows.n,
      events: EVENTS,
      matched,
      workers: Number(args.workers),
      duckdb_sql: args.sql,
      note: "*_ms: the join from events in the engine-native form to the answer's columns the bench reads (date, value); *_all_ms: pitcache to every column of its answer read out; *_probed_ms: pitcache while small requests ran on the same server; *_prep_ms: making the engine-native form from JS arrays",
      pitcache_ms: pTimes,
      pitcache_all_ms: pAll,
      pitcache_probed_ms: pProbed,
      duckdb_ms: dTimes,
      polars_ms: lTimes,
      pitcache_prep_ms: pPrep,
      duckdb_prep_ms: dPrep,
      polars_prep_ms: lPrep,
      pitcache_events_per_s: Math.round(EVENTS / (pm / 1000)),
      duckdb_events_per_s: Math.round(EVENTS / (dm / 1000)),
      polars_events_per_s: Math.round(EVENTS / (median(lTimes) / 1000)),
      ratio_duckdb_over_pitcache: dm / pm,
      ratio_polars_over_pitcache: median(lTimes) / pm,
      ratio_duckdb_over_pitcache_every_column: dm / median(pAll),
      ratio_duckdb_over_pitcache_probed: dm / median(pProbed),
      ratio_with_prep_duckdb_over_pitcache: median(dTimes.map((t, i) => t + dPrep[i]!)) / median(pTimes.map((t, i) => t + pPrep[i]!)),
      ratio_with_prep_polars_over_pitcache: median(lTimes.map((t, i) => t + lPrep[i]!)) / median(pTimes.map((t, i) => t + pPrep[i]!)),
      small_p99_ms_quiet: p99(quiet),
      small_p99_ms_during_joins: p99(during),
      small_max_ms_during_joins: max(during),
      small_quiet: quiet.length,
      small_during: during.length,
      ...(before === null
        ? {}
        : {
            before_cli: args['before-cli'],
            before_ms: bTimes,
            before_all_ms: bAll,
            before_probed_ms: bProbed,
            ratio_duckdb_over_before: dm / median(bTimes),
            before_prep_ms: bPrep,
            before_small_p99_ms_during_joins: p99(duringBefore),
            before_small_max_ms_during_joins: max(duringBefore),
            before_small_during: duringBefore.length,
          }),
    };
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    if (args.out !== undefined) await writeFile(args.out, JSON.stringify(result, null, 2) + '\n');
  } catch (e) {
    process.stderr.write(`server output:\n${server.output()}\n`);
    throw e;
  } finally {
    await before?.stop();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

let serverOutput = (): string => '';
/** the input preparation of the last DuckDB or polars join (ms) */
let lastPrepMs = 0;

main().catch((e: unknown) => {
  process.stderr.write(`server output:\n${serverOutput()}\n`);
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)} cause: ${String((e as { cause?: unknown }).cause)}\n`);
  process.exit(1);
});
