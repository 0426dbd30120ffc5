/**
 * The contract between the benchmark runner and every system it measures (pitcache over uWS,
 * the same handler over node:http, DuckDB, PostgreSQL). Every alternative loads the SAME
 * generated rows and answers the SAME query lists, so ratios in RESULTS.md compare like with
 * like. Keep this file stable: other engineers implement against it.
 */

/** Names of the workloads of bench/workloads.ts. */
export type WorkloadName =
  /** (a) one series, date_from = D-90, date_to = as_of = D */
  | 'walk-forward-series'
  /** (b) the same window for every series of a dataset */
  | 'walk-forward-dataset'
  /** (c) latest row of every series, as_of = D (or no as_of) */
  | 'latest'
  /** (d) full history, latest=false, limit=10000, following next_cursor to the end */
  | 'page-walk'
  /** (a) as backtest loops send it: 64 loops, each stepping D by one day over one series */
  | 'walk-forward-loop'
  /** (a)'s first 500 queries, asked again and again: a farm re-running the same backtests (pitcache's response cache) */
  | 'repeated';

/**
 * One request as the HTTP API would receive it: `GET /{dataset}?{params}`. The params are the
 * public query parameters (contract 2 and 3): `date_from`, `date_to`, `as_of`, `latest`,
 * `limit` and the product's filter columns (`country`, `bidding_zone`, ...). Filter values
 * may be comma lists ("any of these"). Alternatives translate them to their own query language
 * and must give the same rows (contract 1-2: visibility with the vintage floor, PIT-4 version
 * choice, date/series order).
 */
export interface BenchQuery {
  /** "product/dataset", e.g. "pemi/grid_stress" */
  readonly dataset: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Arrow-level type of a column, enough to create a table and parse the CSV side file. */
export type BenchColumnType =
  | 'date32'
  /** integer microseconds in memory; ISO 8601 UTC with `Z` in the CSV */
  | 'timestamp'
  | 'utf8'
  | 'float64'
  | 'float32'
  | 'int32'
  | 'bool';

export interface BenchColumn {
  readonly name: string;
  readonly type: BenchColumnType;
}

export interface BenchDataset {
  /** "product/dataset" */
  readonly id: string;
  readonly productId: string;
  readonly dataset: string;
  /** `pitcache.series_key`, in declared order (the row order after `date`) */
  readonly seriesKey: readonly string[];
  /**
   * every column in schema order (the order a row renders in), typed as batches() and the
   * CSV present them: `str_effective_at` is always 'timestamp' (a Date32 one is midnight UTC)
   */
  readonly columns: readonly BenchColumn[];
  /** the product's query filters: parameter name = series-key column */
  readonly filters: readonly string[];
  /** the product's vintage floor, YYYY-MM-DD (contract 1: F = end of that UTC day) */
  readonly floorDate: string;
  /** stored row-versions */
  readonly rows: number;
  /** the Arrow IPC file of the current generation */
  readonly arrowPath: string;
  readonly arrowBytes: number;
  /**
   * The same rows as CSV with a header line, in the Arrow file's order: dates `YYYY-MM-DD`,
   * timestamps `YYYY-MM-DDTHH:MM:SS.ffffffZ` (str_effective_at too, even where the Arrow
   * column is a Date32: then it is midnight UTC), booleans `true`/`false`, nulls empty,
   * strings never need quoting. Written on first call, then cached beside the Arrow file.
   */
  csvPath(): Promise<string>;
  /**
   * The same rows again, in column-major batches; the CSV is derived from this. Values per
   * column: date32 -> days since epoch (Int32Array), timestamp -> µs since epoch
   * (Float64Array, exact: all are < 2^53), utf8 -> string[], numbers -> Float64Array with
   * NaN for null, bool -> Uint8Array (0/1, 2 = null).
   */
  batches(): AsyncIterable<BenchBatch>;
}

export interface BenchBatch {
  readonly length: number;
  /** aligned with BenchDataset.columns */
  readonly columns: readonly (Int32Array | Float64Array | Uint8Array | readonly (string | null)[])[];
}

/** A generated data set: a local snapshot source folder (contract 6) plus a keys file. */
export interface BenchData {
  /** "main", "scale-1m", "scale-10m", "scale-50m" (or a quick-mode variant) */
  readonly name: string;
  /** the snapshot source folder, usable as `--source` */
  readonly sourceDir: string;
  /** a keys file (contract 7) with `apiKey` (all products, unlimited) and `adminKey` */
  readonly keysPath: string;
  readonly apiKey: string;
  readonly adminKey: string;
  readonly datasets: readonly BenchDataset[];
  readonly totalRows: number;
  readonly totalArrowBytes: number;
}

export interface RunOptions {
  /** concurrent in-flight requests (HTTP connections, or DB connections/workers) */
  readonly connections: number;
  /** measuring time; the runner adds no warm-up inside this */
  readonly durationSec: number;
  /** load before measuring that is not counted (the runner's default is 2 s, 0 in --quick) */
  readonly warmupSec?: number;
}

export interface RunResult {
  /**
   * Answered requests. For 'page-walk' one request is one page (one HTTP GET, or one
   * keyset-paged SQL query of at most `limit` rows).
   */
  readonly requests: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** rows returned in total (sum of `count`), for rows/s */
  readonly rows: number;
  /** failed requests (non-2xx, socket errors, SQL errors) */
  readonly errors: number;
  /** response bytes, when the alternative knows them */
  readonly bytes?: number;
  /** a free note shown beside the row in RESULTS.md (e.g. "8 connections in pool") */
  readonly note?: string;
  /** the server's garbage collection over the measured run, when it reports it (pitcache: /metrics) */
  readonly gc?: GcOverRun;
}

/**
 * What the server's serving threads allocated and collected during one measured run
 * (differences of its counters, summed over threads): per request, and per 10 s.
 */
export interface GcOverRun {
  readonly allocatedBytes: number;
  readonly scavenges: number;
  readonly markCompacts: number;
  /** every kind of collection */
  readonly pauseMs: number;
  readonly markCompactPauseMs: number;
}

export interface SetupInfo {
  /** seconds from the start of setup() until the first query could be answered */
  readonly loadSeconds: number;
  /** resident memory of whatever holds the data (server process, DB server), bytes */
  readonly rssBytes?: number;
  /** peak resident memory (VmHWM) of that process, bytes */
  readonly peakRssBytes?: number;
  readonly version?: string;
  readonly note?: string;
}

export interface Alternative {
  /** shown in RESULTS.md, e.g. "pitcache (uWS, 1 worker)", "duckdb" */
  readonly name: string;
  /** false (with a reason) when the system is not installed: the runner notes it and moves on */
  available(): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** load the data (time it honestly: from the Arrow/CSV bytes to ready to answer) */
  setup(data: BenchData): Promise<SetupInfo>;
  run(workload: WorkloadName, queries: readonly BenchQuery[], opts: RunOptions): Promise<RunResult>;
  /**
   * Optional cross-check: total rows one query matches (metadata.total_count for the API).
   * The runner compares a sample across alternatives so a fast wrong answer is caught.
   */
  totalRows?(query: BenchQuery): Promise<number>;
  teardown(): Promise<void>;
}

/** Latency samples (ms) to percentiles; a sorted copy is exact and cheap at bench sizes. */
export function percentile(sortedMs: ArrayLike<number>, p: number): number {
  const n = sortedMs.length;
  if (n === 0) return NaN;
  const rank = Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
  return sortedMs[rank]!;
}

/** Collects latencies without allocation per sample (grows by doubling). */
export class LatencyRecorder {
  private samples = new Float64Array(1 << 16);
  private n = 0;

  record(ms: number): void {
    if (this.n === this.samples.length) {
      const next = new Float64Array(this.samples.length * 2);
      next.set(this.samples);
      this.samples = next;
    }
    this.samples[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): { count: number; p50Ms: number; p99Ms: number; maxMs: number } {
    const sorted = this.samples.slice(0, this.n).sort();
    return { count: this.n, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: this.n > 0 ? sorted[this.n - 1]! : NaN };
  }
}

/**
 * Runs `step(connection, iteration)` on `connections` concurrent loops until `durationSec`
 * has passed. A step is one request; connection c should start at query c * len/connections
 * and walk the list in order (wrapping), as the wrk scripts do.
 */
export async function closedLoop(
  connections: number,
  durationSec: number,
  step: (connection: number, iteration: number) => Promise<{ rows: number; ok: boolean }>,
): Promise<Omit<RunResult, 'note' | 'bytes'>> {
  const latency = new LatencyRecorder();
  let rows = 0;
  let errors = 0;
  const start = performance.now();
  const end = start + durationSec * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        try {
          const r = await step(c, i);
          rows += r.rows;
          if (!r.ok) errors++;
        } catch {
          errors++;
        }
        latency.record(performance.now() - t0);
      }
    }),
  );
  const s = latency.summary();
  return { requests: s.count, seconds: (performance.now() - start) / 1000, p50Ms: s.p50Ms, p99Ms: s.p99Ms, rows, errors };
}
