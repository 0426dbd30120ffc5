import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { OpsError, type OpsErrorCode } from '../ops-errors.js';
import { snapshotToTable, type SnapshotExpectations } from '../store/snapshot-to-table.js';
import { tableFromTransfer, type TableTransfer } from '../store/table-transfer.js';
import type { Table } from '../store/table.js';

/** A built table, and the parts' bytes when asked for (a worker hands them back: they were moved to it). */
export interface BuiltTable {
  readonly table: Table;
  readonly parts: Uint8Array[] | null;
}

/**
 * Turns snapshot bytes into a table. The server builds off its thread; tools build inline.
 * The bytes are the builder's: it may move them to another thread and free them once built,
 * unless `keepBytes` asks for them back (the local cache writes them).
 */
export interface TableBuilder {
  /** how many builds run at once (the loader loads that many datasets together) */
  readonly parallelism: number;
  build(parts: Uint8Array[], want: SnapshotExpectations, keepBytes: boolean): Promise<BuiltTable>;
  close(): Promise<void>;
}

export const inlineBuilder: TableBuilder = {
  parallelism: 1,
  build: async (parts, want, keepBytes) => ({ table: snapshotToTable(parts, want), parts: keepBytes ? parts : null }),
  close: async () => {},
};

/** Builders a server starts: one per core, up to 4 (each build is single-threaded and holds a snapshot in memory). */
export const DEFAULT_BUILDERS = Math.max(1, Math.min(4, availableParallelism()));

interface Job {
  readonly parts: Uint8Array[];
  readonly want: SnapshotExpectations;
  readonly keepBytes: boolean;
  resolve(t: BuiltTable): void;
  reject(e: Error): void;
}

type Reply = { ok: true; table: TableTransfer; parts: Uint8Array[] | null } | { ok: false; error: string; code: OpsErrorCode };

/**
 * A few worker threads that decode, check and index snapshots, so a refresh of a large
 * dataset never blocks the event loop that answers requests. Results come back on shared
 * memory (no copy); the snapshot bytes are moved to the worker and back (the local cache
 * writes them). Workers start lazily and are reused while there is work; once all of them
 * have been idle for `idleMs` they exit, so that the scratch memory of their last builds
 * (hundreds of MB after a large snapshot, freed only at some later GC) does not stay in the
 * server's resident memory until the next refresh.
 */
export class WorkerTableBuilder implements TableBuilder {
  private readonly idle: Worker[] = [];
  private readonly all: Worker[] = [];
  private readonly queue: Job[] = [];
  private closed = false;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly size = DEFAULT_BUILDERS,
    private readonly idleMs = 1000,
  ) {}

  get parallelism(): number {
    return this.size;
  }

  build(parts: Uint8Array[], want: SnapshotExpectations, keepBytes: boolean): Promise<BuiltTable> {
    if (this.closed) return Promise.reject(new Error('table builder is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ parts, want, keepBytes, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    await Promise.all(this.all.map((w) => w.terminate()));
  }

  private pump(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    while (this.queue.length > 0) {
      let worker = this.idle.pop();
      if (worker === undefined && this.all.length < this.size) worker = this.spawn();
      if (worker === undefined) return;
      this.run(worker, this.queue.shift()!);
    }
    if (this.idle.length > 0 && this.idle.length === this.all.length && !this.closed) {
      this.idleTimer = setTimeout(() => this.retireIdle(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private retireIdle(): void {
    this.idleTimer = null;
    for (const w of this.idle.splice(0)) {
      this.all.splice(this.all.indexOf(w), 1);
      void w.terminate();
    }
  }

  private spawn(): Worker {
    const w = spawnModuleWorker(new URL(import.meta.url.endsWith('.ts') ? './table-build-worker.ts' : './table-build-worker.js', import.meta.url));
    w.unref();
    this.all.push(w);
    return w;
  }

  private run(worker: Worker, job: Job): void {
    const done = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      if (!this.closed) {
        this.idle.push(worker);
        this.pump();
      }
    };
    const onMessage = (reply: Reply): void => {
      done();
      if (reply.ok) job.resolve({ table: tableFromTransfer(reply.table), parts: reply.parts });
      else job.reject(new OpsError(reply.code, reply.error));
    };
    const onError = (e: Error): void => {
      // A crashed worker is dropped; the next job gets a fresh one.
      worker.off('message', onMessage);
      this.all.splice(this.all.indexOf(worker), 1);
      job.reject(e);
      this.pump();
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    // Copy into a transferable buffer only when the bytes share a pooled one.
    const parts = job.parts.map((b) =>
      b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && !(b.buffer instanceof SharedArrayBuffer) ? b : b.slice(),
    );
    worker.postMessage(
      { parts, want: job.want, keepBytes: job.keepBytes } satisfies BuildRequest,
      parts.map((b) => b.buffer as ArrayBuffer),
    );
  }
}

/** What the build worker is sent (table-build-worker.ts). */
export interface BuildRequest {
  readonly parts: Uint8Array[];
  readonly want: SnapshotExpectations;
  readonly keepBytes: boolean;
}

/**
 * Starts a worker on an ES module. Under the TypeScript sources (tests, development) the
 * worker registers tsx first: Node 20 does not pass `--import` loaders on to workers.
 */
export function spawnModuleWorker(url: URL, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json');
  const tsx = join(dirname(pkg), 'dist/esm/api/index.mjs');
  const boot = `import(${JSON.stringify(pathToHref(tsx))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

function pathToHref(path: string): string {
  return new URL(`file://${path}`).href;
}
