import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { snapshotToTable, type SnapshotExpectations } from '../store/snapshot-to-table.js';
import { tableFromTransfer, type TableTransfer } from '../store/table-transfer.js';
import type { Table } from '../store/table.js';

/** Turns snapshot bytes into a table. The server builds off its thread; tools build inline. */
export interface TableBuilder {
  build(bytes: Uint8Array, want: SnapshotExpectations): Promise<Table>;
  close(): Promise<void>;
}

export const inlineBuilder: TableBuilder = {
  build: async (bytes, want) => snapshotToTable(bytes, want),
  close: async () => {},
};

interface Job {
  readonly bytes: Uint8Array;
  readonly want: SnapshotExpectations;
  resolve(t: Table): void;
  reject(e: Error): void;
}

type Reply = { ok: true; table: TableTransfer } | { ok: false; error: string };

/**
 * A few worker threads that decode, check and index snapshots, so a refresh of a large
 * dataset never blocks the event loop that answers requests. Results come back on shared
 * memory (no copy). Workers start lazily and are reused.
 */
export class WorkerTableBuilder implements TableBuilder {
  private readonly idle: Worker[] = [];
  private readonly all: Worker[] = [];
  private readonly queue: Job[] = [];
  private closed = false;

  constructor(private readonly size = Math.max(1, Math.min(2, availableParallelism()))) {}

  build(bytes: Uint8Array, want: SnapshotExpectations): Promise<Table> {
    if (this.closed) return Promise.reject(new Error('table builder is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, want, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.all.map((w) => w.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let worker = this.idle.pop();
      if (worker === undefined && this.all.length < this.size) worker = this.spawn();
      if (worker === undefined) return;
      this.run(worker, this.queue.shift()!);
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
      if (reply.ok) job.resolve(tableFromTransfer(reply.table));
      else job.reject(new Error(reply.error));
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
    const own = job.bytes.byteOffset === 0 && job.bytes.byteLength === job.bytes.buffer.byteLength && !(job.bytes.buffer instanceof SharedArrayBuffer);
    const bytes = own ? job.bytes : job.bytes.slice();
    worker.postMessage({ bytes, want: job.want }, [bytes.buffer as ArrayBuffer]);
  }
}

/**
 * Starts a worker on an ES module. Under the TypeScript sources (tests, development) the
 * worker registers tsx first: Node 20 does not pass `--import` loaders on to workers.
 */
export function spawnModuleWorker(url: URL): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url);
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json');
  const tsx = join(dirname(pkg), 'dist/esm/api/index.mjs');
  const boot = `import(${JSON.stringify(pathToHref(tsx))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { eval: true });
}

function pathToHref(path: string): string {
  return new URL(`file://${path}`).href;
}
