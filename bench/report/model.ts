/** Everything one run measured; RESULTS.md is rendered from this (and it is saved as JSON beside it). */
import type { RunResult, SetupInfo, WorkloadName } from '../alternatives/types.js';
import type { DatasetLoad } from '../alternatives/http-server.js';
import type { MemoryReading } from '../lib/proc.js';
import type { MicroResult } from '../micro/hot-paths.js';
import type { MachineInfo } from './machine.js';
import type { OtherFormat } from '../workloads.js';
import type { ChainPagesResult } from '../sections/chain-pages.js';

export interface DataSummary {
  readonly name: string;
  readonly sourceDir: string;
  readonly rows: number;
  readonly arrowBytes: number;
  readonly datasets: readonly { id: string; rows: number; bytes: number }[];
}

export type Outcome<T> = ({ ok: true } & T) | { ok: false; error: string };

export interface AlternativeResults {
  readonly name: string;
  /** why it did not run, when it did not */
  skipped?: string;
  setup?: SetupInfo;
  /** per-dataset load times the server reported (HTTP alternatives) */
  loads?: DatasetLoad[];
  memoryAfterRuns?: MemoryReading | null;
  runs: Partial<Record<WorkloadName, Outcome<RunResult>>>;
  /**
   * The uWS ceiling (issue 11.1) for each workload this alternative ran: a fixed body of
   * its mean answer size, the same worker count and CPUs, the same wrk script, same run.
   */
  ceilings?: Partial<Record<WorkloadName, Outcome<CeilingRun>>>;
  /** the bulk workloads answered in CSV and Arrow (pitcache over HTTP), each with its ceiling run */
  formats?: Partial<Record<WorkloadName, Partial<Record<OtherFormat, FormatRun>>>>;
  /** page-walk's chains followed one request at a time, per format: each page's time, last page ÷ median page (sections/chain-pages.ts) */
  chainPages?: Outcome<{ readonly formats: readonly ChainPagesResult[] }>;
}

/** One bulk workload in one format: pitcache's run and the ceiling's for its mean answer in that format. */
export interface FormatRun {
  readonly run: Outcome<RunResult>;
  readonly ceiling: Outcome<CeilingRun> | null;
}

/**
 * The ceiling's run for one workload: slices of the ceiling interleaved with slices of the
 * pitcache server it is compared with (`paired`), the ceiling's figures summed over its own
 * slices. This VM's speed drifts by up to 2x within a minute, so a share taken from two runs
 * a minute apart measured the drift as much as pitcache; rounds of back-to-back slices,
 * alternately first, see the same machine.
 */
export interface CeilingRun extends RunResult {
  readonly bodyBytes: number;
  readonly paired?: readonly PairedRound[];
}

/** One round of the interleaved share: a slice of pitcache and a slice of its ceiling, back to back. */
export interface PairedRound {
  readonly pitcache: RunResult;
  readonly ceiling: RunResult;
}

export interface CrossCheck {
  readonly workload: WorkloadName;
  readonly path: string;
  /** total rows per alternative name (or an error text) */
  readonly totals: Record<string, number | string>;
}

export interface ScalePoint {
  readonly name: string;
  readonly rows: number;
  readonly arrowBytes: number;
  result: Outcome<{ loadSeconds: number; memory: MemoryReading | null; run: RunResult }>;
}

export interface S3Results {
  readonly dataSet: string;
  readonly rows: number;
  readonly arrowBytes: number;
  load: Outcome<{ uploadSeconds: number; readySeconds: number; memory: MemoryReading | null }>;
  swap?: Outcome<{
    baseline: RunResult;
    during: RunResult;
    refreshSeconds: number;
    refreshStatus: number;
    generationAfter: number | null;
    memoryAfter: MemoryReading | null;
  }>;
}

export interface BenchResults {
  readonly startedAt: string;
  finishedAt?: string;
  readonly quick: boolean;
  readonly command: string;
  readonly options: Record<string, unknown>;
  readonly machine: MachineInfo;
  readonly pinning: string;
  readonly data: DataSummary[];
  readonly workloads: { name: WorkloadName; text: string; queries: number }[];
  readonly connections: number;
  readonly durationSec: number;
  readonly warmupSec: number;
  /** RSS of pitcache (1 worker) serving no data at all */
  emptyServer?: MemoryReading | null;
  alternatives: AlternativeResults[];
  crossChecks: CrossCheck[];
  /** wrk against GET /healthz on pitcache: the most the load generator can show */
  ceiling?: Outcome<RunResult>;
  scale: ScalePoint[];
  s3?: S3Results;
  micro?: Outcome<{ table: { rows: number; buildMs: number; dataset: string }; results: MicroResult[] }>;
  readonly notes: string[];
}
