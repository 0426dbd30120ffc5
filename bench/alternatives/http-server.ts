/**
 * An alternative that is an HTTP server speaking pitcache's API, run as a child process
 * (pinned to its own CPUs when possible) and driven by wrk from the other CPUs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Alternative, BenchData, BenchQuery, RunOptions, RunResult, SetupInfo, WorkloadName } from './types.js';
import { freePort, pinned, readMemory, spawnLogged, waitFor200, type MemoryReading, type Spawned } from '../lib/proc.js';
import { gcOver, scrapeGc } from '../lib/gc-scrape.js';
import { runWrk } from '../wrk/run-wrk.js';
import { toPath, writePathsFile } from '../workloads.js';

export interface HttpAlternativeOptions {
  readonly name: string;
  /** argv of the server, given the data and port (without taskset) */
  readonly command: (data: BenchData, port: number) => string[];
  readonly env?: NodeJS.ProcessEnv;
  /** taskset CPU lists; undefined = not pinned */
  readonly serverCpus?: string;
  readonly wrkCpus?: string;
  /** wrk threads in list mode */
  readonly wrkThreads?: number;
  readonly readyTimeoutMs?: number;
  readonly version?: string;
  readonly note?: string;
  /** reads the server's GC counters (pitcache's /metrics) around each measured run */
  readonly gcMetrics?: boolean;
}

export interface DatasetLoad {
  readonly dataset: string;
  readonly rows: number;
  readonly loadMs: number;
  readonly bytes: number | null;
}

export class HttpServerAlternative implements Alternative {
  readonly name: string;
  private proc: Spawned | null = null;
  private port = 0;
  private data: BenchData | null = null;
  private tmp: string | null = null;

  constructor(private readonly o: HttpAlternativeOptions) {
    this.name = o.name;
  }

  async available(): Promise<{ ok: true } | { ok: false; reason: string }> {
    return { ok: true };
  }

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  memory(): MemoryReading | null {
    return this.proc === null ? null : readMemory(this.proc.pid);
  }

  async setup(data: BenchData): Promise<SetupInfo> {
    this.data = data;
    this.tmp = await mkdtemp(join(tmpdir(), 'pitcache-bench-'));
    this.port = await freePort();
    const t0 = performance.now();
    this.proc = spawnLogged(pinned(this.o.serverCpus, this.o.command(data, this.port)), this.o.env);
    await waitFor200(`${this.baseUrl}/readyz`, this.proc, this.o.readyTimeoutMs ?? 30 * 60_000);
    const loadSeconds = (performance.now() - t0) / 1000;
    const mem = this.memory();
    return {
      loadSeconds,
      ...(mem === null ? {} : { rssBytes: mem.rss, peakRssBytes: mem.hwm }),
      ...(this.o.version === undefined ? {} : { version: this.o.version }),
      ...(this.o.note === undefined ? {} : { note: this.o.note }),
    };
  }

  /** Per-dataset load times the server reports (GET /admin/status), when it has them. */
  async datasetLoads(): Promise<DatasetLoad[]> {
    const r = await fetch(`${this.baseUrl}/admin/status`, { headers: { 'x-api-key': this.data!.adminKey } });
    if (r.status !== 200) return [];
    const j = (await r.json()) as { datasets: { dataset: string; rows: number | null; load_ms: number | null; bytes: number | null }[] };
    return j.datasets.map((d) => ({ dataset: d.dataset, rows: d.rows ?? 0, loadMs: d.load_ms ?? NaN, bytes: d.bytes }));
  }

  async run(workload: WorkloadName, queries: readonly BenchQuery[], opts: RunOptions): Promise<RunResult> {
    const file = join(this.tmp!, `${workload}.paths`);
    await writePathsFile(file, queries);
    const mode = workload === 'page-walk' ? 'walk' : 'list';
    const common = {
      baseUrl: this.baseUrl,
      pathsFile: file,
      apiKey: this.data!.apiKey,
      mode,
      connections: opts.connections,
      ...(this.o.wrkCpus === undefined ? {} : { cpus: this.o.wrkCpus }),
      ...(this.o.wrkThreads === undefined ? {} : { threads: this.o.wrkThreads }),
    } as const;
    await this.settle();
    if ((opts.warmupSec ?? 0) > 0) {
      await runWrk({ ...common, durationSec: opts.warmupSec! });
      await this.settle();
    }
    const before = this.o.gcMetrics === true ? await scrapeGc(this.baseUrl, this.data!.adminKey).catch(() => null) : null;
    const r = await runWrk({ ...common, durationSec: opts.durationSec });
    const after = before === null ? null : await scrapeGc(this.baseUrl, this.data!.adminKey).catch(() => null);
    return before === null || after === null ? r : { ...r, gc: gcOver(before, after) };
  }

  /**
   * Waits until the server answers GET /healthz quickly: when wrk stops, the requests it had
   * in flight are still being answered (to closed sockets), and a run started before that
   * backlog is gone would measure the previous run's tail.
   */
  async settle(timeoutMs = 60_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (let fast = 0; fast < 3 && Date.now() < end;) {
      const t0 = performance.now();
      const r = await fetch(`${this.baseUrl}/healthz`);
      await r.arrayBuffer();
      fast = performance.now() - t0 < 50 ? fast + 1 : 0;
    }
  }

  /** Runs wrk with any paths file (the runner's swap and ceiling measurements). */
  async wrk(pathsFile: string, mode: 'list' | 'walk', connections: number, durationSec: number): Promise<RunResult> {
    await this.settle();
    return runWrk({
      baseUrl: this.baseUrl,
      pathsFile,
      apiKey: this.data!.apiKey,
      mode,
      connections,
      durationSec,
      ...(this.o.wrkCpus === undefined ? {} : { cpus: this.o.wrkCpus }),
      ...(this.o.wrkThreads === undefined ? {} : { threads: this.o.wrkThreads }),
    });
  }

  async totalRows(q: BenchQuery): Promise<number> {
    const r = await fetch(this.baseUrl + toPath(q), { headers: { 'x-api-key': this.data!.apiKey } });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${this.name}: ${toPath(q)} answered ${r.status}: ${text.slice(0, 300)}`);
    const m = /"total_count":(\d+)/.exec(text);
    if (m === null) throw new Error(`${this.name}: no total_count in the answer to ${toPath(q)}`);
    return Number(m[1]);
  }

  /** POST /admin/refresh with the admin key; resolves with the answer. */
  async refresh(): Promise<{ status: number; body: string }> {
    const r = await fetch(`${this.baseUrl}/admin/refresh`, { method: 'POST', headers: { 'x-api-key': this.data!.adminKey } });
    return { status: r.status, body: await r.text() };
  }

  async teardown(): Promise<void> {
    await this.proc?.stop();
    this.proc = null;
    if (this.tmp !== null) await rm(this.tmp, { recursive: true, force: true });
    this.tmp = null;
  }
}
