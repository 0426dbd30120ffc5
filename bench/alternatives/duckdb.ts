/**
 * DuckDB in process (@duckdb/node-api), driven the way its users would: one in-memory
 * database, each dataset a table sorted by (series key, date, observed, ingested), one prepared
 * statement per query shape and connection, called in a loop. Concurrency is DuckDB
 * connections in this process (each query runs on libuv's pool, so 2 connections keep both
 * cores busy); more than `maxConnections` would only queue, so the runner's count is capped.
 */
import { readFileSync } from 'node:fs';
import type * as DuckNs from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBResult, DuckDBResultReader } from '@duckdb/node-api';
import type { Alternative, BenchData, BenchDataset, BenchQuery, RunOptions, RunResult, SetupInfo, WorkloadName } from './types.js';
import { closedLoop } from './types.js';
import type { CanonicalRow, KeysetAfter, PageFetcher, QueryPlan, SqlParam } from './duckdb-postgres-plan.js';
import { canonicalCell, findDataset, keysetOf, planQuery, storedType } from './duckdb-postgres-plan.js';
import { duckdbLoadStatements, duckdbQuery } from './duckdb-sql.js';

type DuckApi = typeof DuckNs;

export interface DuckDbOptions {
  /** cap on concurrent connections (default 2 = the cores here; env BENCH_DUCKDB_CONNECTIONS) */
  readonly maxConnections?: number;
  /** DuckDB worker threads (default: env BENCH_DUCKDB_THREADS, else DuckDB's own: the core count) */
  readonly threads?: number;
  /** also turn each result into row objects and JSON text, as a server would (default false) */
  readonly render?: boolean;
  /** table order (default 'date': see duckdbLoadStatements) */
  readonly sortBy?: 'date' | 'series';
  /**
   * page-walk: 'stream' (default) runs each chain as one streamed query and pulls pages of
   * `limit` rows from it, as a DuckDB user exporting history would; 'keyset' sends one
   * query per page, which re-resolves everything after the page start (seconds per page at
   * 1M rows). Env BENCH_DUCKDB_PAGE_WALK.
   */
  readonly pageWalk?: 'stream' | 'keyset';
}

interface Planned {
  readonly ds: BenchDataset;
  readonly plan: QueryPlan;
}

/** One connection with its prepared statements, keyed by SQL text. */
class Session {
  private readonly statements = new Map<string, DuckDBPreparedStatement>();
  constructor(
    private readonly api: DuckApi,
    readonly conn: DuckDBConnection,
  ) {}

  async query(sql: string, params: readonly SqlParam[]): Promise<DuckDBResultReader> {
    return (await this.bound(sql, params)).runAndReadAll();
  }

  async stream(sql: string, params: readonly SqlParam[]): Promise<DuckDBResult> {
    return (await this.bound(sql, params)).stream();
  }

  private async bound(sql: string, params: readonly SqlParam[]): Promise<DuckDBPreparedStatement> {
    let st = this.statements.get(sql);
    if (st === undefined) {
      st = await this.conn.prepare(sql);
      this.statements.set(sql, st);
    }
    params.forEach((p, i) => {
      const at = i + 1;
      if (p.type === 'text') st.bindVarchar(at, p.value);
      else if (p.type === 'date') st.bindDate(at, new this.api.DuckDBDateValue(p.value));
      else if (p.type === 'timestamp') st.bindTimestamp(at, new this.api.DuckDBTimestampValue(BigInt(p.value)));
      else st.bindBigInt(at, BigInt(p.value));
    });
    return st;
  }
}

export function createDuckDbAlternative(options: DuckDbOptions = {}): Alternative & PageFetcher {
  const maxConnections = options.maxConnections ?? Number(process.env.BENCH_DUCKDB_CONNECTIONS ?? 2);
  const pageWalk = options.pageWalk ?? (process.env.BENCH_DUCKDB_PAGE_WALK === 'keyset' ? 'keyset' : 'stream');
  let api: DuckApi | null = null;
  let instance: DuckDBInstance | null = null;
  let datasets: readonly BenchDataset[] = [];
  let admin: Session | null = null;

  const ready = (): { api: DuckApi; instance: DuckDBInstance; admin: Session } => {
    if (api === null || instance === null || admin === null) throw new Error('duckdb: setup() first');
    return { api, instance, admin };
  };

  return {
    name: options.render === true ? 'duckdb (in process, rows to JSON)' : 'duckdb (in process)',

    async available() {
      try {
        api = await import('@duckdb/node-api');
        return { ok: true };
      } catch (e) {
        return { ok: false, reason: `@duckdb/node-api does not load: ${(e as Error).message}` };
      }
    },

    async setup(data: BenchData): Promise<SetupInfo> {
      api ??= await import('@duckdb/node-api');
      datasets = data.datasets;
      // The CSV side file is the input format (as the Arrow file is pitcache's): writing it
      // is the harness's job and not part of DuckDB's load time.
      const csv = new Map<string, string>();
      for (const ds of datasets) csv.set(ds.id, await ds.csvPath());
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      const config: Record<string, string> = {};
      const threads = options.threads ?? (process.env.BENCH_DUCKDB_THREADS === undefined ? undefined : Number(process.env.BENCH_DUCKDB_THREADS));
      if (threads !== undefined) config.threads = String(threads);
      instance = await api.DuckDBInstance.create(':memory:', config);
      admin = new Session(api, await instance.connect());
      for (const ds of datasets) {
        for (const sql of duckdbLoadStatements(ds, csv.get(ds.id)!, options.sortBy ?? 'date')) await admin.conn.run(sql);
      }
      const loadSeconds = (performance.now() - started) / 1000;
      const version = String((await admin.conn.runAndReadAll('SELECT version()')).value(0, 0));
      const mem = await admin.conn.runAndReadAll('SELECT sum(memory_usage_bytes) FROM duckdb_memory()');
      return {
        loadSeconds,
        // In the runner's process: what the load added to it, not the runner's own memory.
        rssBytes: process.memoryUsage().rss - rssBefore,
        version: `DuckDB ${version} (@duckdb/node-api)`,
        note:
          `in the runner's process: RSS is its growth during the load (process ${fmtMiB(process.memoryUsage().rss)}, peak ${fmtMiB(vmHwm() ?? 0)}); ` +
          `DuckDB's buffer manager holds ${fmtMiB(Number(mem.value(0, 0)))}; CSV read with read_csv, then CREATE TABLE ... ORDER BY`,
      };
    },

    async run(workload: WorkloadName, queries: readonly BenchQuery[], opts: RunOptions): Promise<RunResult> {
      const { api: duck, instance: db } = ready();
      const n = Math.max(1, Math.min(opts.connections, maxConnections));
      const planned: Planned[] = queries.map((q) => {
        const ds = findDataset(datasets, q);
        return { ds, plan: planQuery(ds, q) };
      });
      const sessions: Session[] = [];
      for (let c = 0; c < n; c++) sessions.push(new Session(duck, await db.connect()));
      const render = options.render === true;
      const step =
        workload !== 'page-walk'
          ? singleShot(sessions, planned, render)
          : pageWalk === 'stream'
            ? streamWalker(sessions, planned)
            : pageWalker(sessions, planned, render);
      try {
        if ((opts.warmupSec ?? 0) > 0) await closedLoop(n, opts.warmupSec!, step.fresh());
        const r = await closedLoop(n, opts.durationSec, step.fresh());
        const how = workload === 'page-walk' ? `, ${pageWalk === 'stream' ? 'one streamed query per chain' : 'one keyset query per page'}` : '';
        return { ...r, note: `${n} DuckDB connection${n === 1 ? '' : 's'} in process (runner asked ${opts.connections})${how}` };
      } finally {
        for (const s of sessions) s.conn.closeSync();
      }
    },

    async totalRows(query: BenchQuery): Promise<number> {
      const { admin: s } = ready();
      const ds = findDataset(datasets, query);
      const built = duckdbQuery(ds, planQuery(ds, query), null, 'count');
      return Number((await s.query(built.sql, built.params)).value(0, 0));
    },

    async fetchPage(query: BenchQuery, after: KeysetAfter | null) {
      const { admin: s } = ready();
      const ds = findDataset(datasets, query);
      const plan = planQuery(ds, query);
      const built = duckdbQuery(ds, plan, after, 'rows', true);
      const reader = await s.query(built.sql, built.params);
      const names = reader.columnNames();
      const rows: CanonicalRow[] = [];
      for (let r = 0; r < Math.min(reader.currentRowCount, plan.limit); r++) {
        const row: CanonicalRow = {};
        for (const c of ds.columns) row[c.name] = canonicalCell(storedType(c), reader.value(names.indexOf(c.name), r));
        rows.push(row);
      }
      return { rows, next: reader.currentRowCount > plan.limit ? keysetOf(ds, rows[rows.length - 1]!) : null };
    },

    async teardown() {
      admin?.conn.closeSync();
      instance?.closeSync();
      admin = null;
      instance = null;
    },
  };
}

type Step = (connection: number, iteration: number) => Promise<{ rows: number; ok: boolean }>;

/** Each step one query of the list; connection c starts at c * len / n (the runner's rule). */
function singleShot(sessions: readonly Session[], planned: readonly Planned[], render: boolean): { fresh(): Step } {
  const built = planned.map((p) => duckdbQuery(p.ds, p.plan, null, 'rows'));
  const n = sessions.length;
  return {
    fresh: () => async (c, i) => {
      const b = built[(Math.floor((c * built.length) / n) + i) % built.length]!;
      const reader = await sessions[c]!.query(b.sql, b.params);
      if (render) JSON.stringify(reader.getRowObjectsJson());
      return { rows: reader.currentRowCount, ok: true };
    },
  };
}

/**
 * Each step one page: a keyset query for `limit` + 1 rows (the extra row says whether a next
 * page exists, as has_more does), continuing after the page's last (date, series key).
 */
function pageWalker(sessions: readonly Session[], planned: readonly Planned[], render: boolean): { fresh(): Step } {
  const n = sessions.length;
  return {
    fresh: () => {
      const state = sessions.map((_, c) => ({ qi: Math.floor((c * planned.length) / n), after: null as KeysetAfter | null }));
      return async (c) => {
        const st = state[c]!;
        const { ds, plan } = planned[st.qi % planned.length]!;
        const b = duckdbQuery(ds, plan, st.after, 'rows', true);
        const reader = await sessions[c]!.query(b.sql, b.params);
        const got = Math.min(reader.currentRowCount, plan.limit);
        if (render) JSON.stringify(reader.getRowObjectsJson().slice(0, got));
        if (reader.currentRowCount > plan.limit) st.after = lastKey(ds, reader, got - 1);
        else {
          st.qi++;
          st.after = null;
        }
        return { rows: got, ok: true };
      };
    },
  };
}

/**
 * Each step one page pulled from the chain's streamed result: chunks (2048 rows) until
 * `limit` rows are in hand; rows past the page carry over to the next one.
 */
function streamWalker(sessions: readonly Session[], planned: readonly Planned[]): { fresh(): Step } {
  const n = sessions.length;
  return {
    fresh: () => {
      const state = sessions.map((_, c) => ({ qi: Math.floor((c * planned.length) / n), result: null as DuckDBResult | null, carry: 0 }));
      return async (c) => {
        const st = state[c]!;
        const { ds, plan } = planned[st.qi % planned.length]!;
        if (st.result === null) {
          const b = duckdbQuery(ds, plan, null, 'all');
          st.result = await sessions[c]!.stream(b.sql, b.params);
          st.carry = 0;
        }
        let got = st.carry;
        while (got < plan.limit) {
          const chunk = await st.result.fetchChunk();
          if (chunk === null || chunk.rowCount === 0) break;
          got += chunk.rowCount;
        }
        if (got >= plan.limit) {
          st.carry = got - plan.limit;
          // Rows that end exactly on a page boundary end the chain here, as has_more would.
          const next = st.carry > 0 ? null : await st.result.fetchChunk();
          if (next !== null && next.rowCount > 0) st.carry = next.rowCount;
          else if (st.carry === 0) endChain(st);
          return { rows: plan.limit, ok: true };
        }
        endChain(st);
        return { rows: got, ok: true };
      };
    },
  };
}

function endChain(st: { qi: number; result: DuckDBResult | null }): void {
  st.result = null;
  st.qi++;
}

function lastKey(ds: BenchDataset, reader: DuckDBResultReader, row: number): KeysetAfter {
  const names = reader.columnNames();
  const at = (name: string): number => names.indexOf(name);
  const date = reader.value(at('date'), row) as { days: number };
  return { date: date.days, keys: ds.seriesKey.map((k) => String(reader.value(at(k), row))) };
}

function vmHwm(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}

function fmtMiB(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

export default createDuckDbAlternative;
