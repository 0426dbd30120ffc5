import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { OpsError, type OpsErrorCode } from '../ops-errors.js';
import { PartAssembly } from '../store/part-assembly.js';
import type { SnapshotExpectations } from '../store/snapshot-to-table.js';
import { tableFromTransfer, type TableTransfer } from '../store/table-transfer.js';
import type { Table } from '../store/table.js';

/**
 * One generation being built from its parts, given in manifest order (part-assembly.ts):
 * each part is decoded into the generation's columns as it arrives and then dropped.
 */
export interface GenerationBuild {
  /**
   * Decodes the next part; resolves once its bytes are consumed. The bytes are the
   * builder's from the call on (moved to another thread, freed). `verified`: they were
   * checked against the manifest's sha256 as they streamed in.
   */
  add(bytes: Uint8Array, verified: boolean): Promise<void>;
  /** The table, once every part is in; rejects with the reason the generation is refused. */
  finish(): Promise<Table>;
  /** Drops the build (a part failed); what it allocated is freed. */
  abort(): void;
}

/** Turns snapshot parts into tables. The server builds off its thread; tools build inline. */
export interface TableBuilder {
  /** how many builds run at once (the loader loads that many datasets together) */
  readonly parallelism: number;
  /** A build of one generation; waits while `parallelism` builds are open. */
  open(want: SnapshotExpectations): Promise<GenerationBuild>;
  close(): Promise<void>;
}

/** A generation whose parts are all in memory (tests, tools): added in turn, each checked against its sha256. */
export async function buildParts(builder: TableBuilder, parts: readonly Uint8Array[], want: SnapshotExpectations): Promise<Table> {
  const build = await builder.open(want);
  try {
    for (const bytes of parts) await build.add(bytes, false);
    return await build.finish();
  } catch (e) {
    build.abort();
    throw e;
  }
}

export const inlineBuilder: TableBuilder = {
  parallelism: 1,
  open: async (want) => {
    const assembly = new PartAssembly(want);
    return {
      add: async (bytes, verified) => assembly.add(bytes, verified),
      finish: async () => assembly.finish(),
      abort: () => {},
    };
  },
  close: async () => {},
};

/** Builders a server starts: one per core, up to 4 (each build is single-threaded and holds a generation's columns). */
export const DEFAULT_BUILDERS = Math.max(1, Math.min(4, availableParallelism()));

/** What the build worker is sent (table-build-worker.ts); each but `abort` gets one Reply with its id. */
export type BuildRequest =
  | { readonly id: number; readonly type: 'open'; readonly want: SnapshotExpectations }
  | { readonly id: number; readonly type: 'add'; readonly bytes: Uint8Array; readonly verified: boolean }
  | { readonly id: number; readonly type: 'finish' }
  | { readonly id: number; readonly type: 'abort' };

export type BuildReply =
  | { readonly id: number; readonly ok: true; readonly table: TableTransfer | null }
  | { readonly id: number; readonly ok: false; readonly error: string; readonly code: OpsErrorCode };

/** A request before its id is given (the union kept: Omit of a union would merge its members). */
type Unsent = BuildRequest extends infer R ? (R extends BuildRequest ? Omit<R, 'id'> : never) : never;

interface Waiting {
  resolve(r: BuildReply): void;
  reject(e: Error): void;
}

/** One build thread: requests go in order, replies come back by id. */
class BuildThread {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  dead: Error | null = null;

  constructor(readonly worker: Worker) {
    worker.on('message', (reply: BuildReply) => {
      const w = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      w?.resolve(reply);
    });
    worker.on('error', (e: Error) => this.fail(e));
    worker.on('exit', () => this.fail(new Error('table build thread exited')));
  }

  ask(request: Unsent, transfer: ArrayBuffer[] = []): Promise<BuildReply> {
    if (this.dead !== null) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  tell(request: Unsent): void {
    if (this.dead === null) this.worker.postMessage({ ...request, id: 0 });
  }

  private fail(e: Error): void {
    this.dead ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }
}

function replied(r: BuildReply): TableTransfer | null {
  if (!r.ok) throw new OpsError(r.code, r.error);
  return r.table;
}

/**
 * A few worker threads that decode, check and index generations, so a refresh of a large
 * dataset never blocks the event loop that answers requests. A build holds one thread from
 * open to finish (its columns live there until the table is sent); parts are moved to it,
 * the table comes back on shared memory (no copy). Threads start lazily and are reused while
 * there is work; once all of them have been idle for `idleMs` they exit, so that the scratch
 * memory of their last builds (hundreds of MB after a large snapshot, freed only at some
 * later GC) does not stay in the server's resident memory until the next refresh.
 */
export class WorkerTableBuilder implements TableBuilder {
  private readonly idle: BuildThread[] = [];
  private readonly all: BuildThread[] = [];
  private readonly queue: Array<(t: BuildThread) => void> = [];
  private closed = false;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly size = DEFAULT_BUILDERS,
    private readonly idleMs = 1000,
  ) {}

  get parallelism(): number {
    return this.size;
  }

  async open(want: SnapshotExpectations): Promise<GenerationBuild> {
    if (this.closed) throw new Error('table builder is closed');
    const thread = await new Promise<BuildThread>((resolve) => {
      this.queue.push(resolve);
      this.pump();
    });
    let done = false;
    const release = (): void => {
      if (done) return;
      done = true;
      this.release(thread);
    };
    try {
      replied(await thread.ask({ type: 'open', want }));
    } catch (e) {
      release();
      throw e;
    }
    return {
      add: async (bytes, verified) => {
        // Moved, not copied: a copy is made only when the bytes share a buffer with others.
        const own =
          bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer) ? bytes : bytes.slice();
        replied(await thread.ask({ type: 'add', bytes: own, verified }, [own.buffer as ArrayBuffer]));
      },
      finish: async () => {
        try {
          return tableFromTransfer(replied(await thread.ask({ type: 'finish' }))!);
        } finally {
          release();
        }
      },
      abort: () => {
        if (done) return;
        thread.tell({ type: 'abort' });
        release();
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    await Promise.all(this.all.map((t) => t.worker.terminate()));
  }

  private release(thread: BuildThread): void {
    if (thread.dead !== null) {
      // A crashed thread is dropped; the next build gets a fresh one.
      const i = this.all.indexOf(thread);
      if (i >= 0) this.all.splice(i, 1);
    } else if (!this.closed) this.idle.push(thread);
    this.pump();
  }

  private pump(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    while (this.queue.length > 0) {
      let thread = this.idle.pop();
      if (thread === undefined && this.all.length < this.size) thread = this.spawn();
      if (thread === undefined) return;
      this.queue.shift()!(thread);
    }
    if (this.idle.length > 0 && this.idle.length === this.all.length && !this.closed) {
      this.idleTimer = setTimeout(() => this.retireIdle(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private retireIdle(): void {
    this.idleTimer = null;
    for (const t of this.idle.splice(0)) {
      this.all.splice(this.all.indexOf(t), 1);
      void t.worker.terminate();
    }
  }

  private spawn(): BuildThread {
    const w = spawnModuleWorker(new URL(import.meta.url.endsWith('.ts') ? './table-build-worker.ts' : './table-build-worker.js', import.meta.url));
    w.unref();
    const t = new BuildThread(w);
    this.all.push(t);
    return t;
  }
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
