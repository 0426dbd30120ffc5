import type { Worker } from 'node:worker_threads';
import { ApiError } from '../errors.js';
import { spawnModuleWorker } from '../generations/table-builder.js';
import type { JoinOutcome, JoinRequest } from '../join/join-compute.js';
import { tableToTransfer } from '../store/table-transfer.js';
import type { Table } from '../store/table.js';
import type { FromJoinWorker, JoinWorkerData, ToJoinWorker, WorkerMemory } from './join-messages.js';

/** The client went away before its join was answered: the join was stopped (or never started). */
export class JoinAbandoned extends Error {
  constructor() {
    super('the client went away before the join was answered');
  }
}

/** What a runner has done, for tests and status. */
export interface JoinRunnerStats {
  /** joins handed to the worker */
  readonly started: number;
  /** answered by the worker (an answer or a 4xx) */
  readonly finished: number;
  /** stopped by the worker at a check, the client gone */
  readonly stopped: number;
  /** taken out of the queue before they started, the client gone */
  readonly dropped: number;
  /** a join is in the worker now */
  readonly busy: boolean;
}

interface Job {
  readonly id: number;
  readonly table: Table;
  readonly uid: number;
  readonly bytes: Uint8Array;
  readonly request: JoinRequest;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
  resolve(o: JoinOutcome): void;
  reject(e: Error): void;
}

/** Tables a worker holds at once (most recently joined): the live generation and one pinned by `generation=`. */
const TABLES_HELD = 2;

/**
 * Runs large joins on one worker thread, one at a time in arrival order, so the serving
 * thread that received them keeps answering small requests while they are computed
 * (docs/decisions.md#join-off-thread). The table is on shared memory: the worker is sent
 * its transfer once per generation (by uid) and keeps the last few. The body moves to the
 * worker and the answer back (no copy). A join whose client goes away is dropped from the
 * queue, or stopped by the worker at its next check; either way its promise rejects at once
 * with JoinAbandoned. The worker starts with the first join and stays (a fresh one costs
 * seconds of start and warm-up on a busy machine: more than the join of 20,000 events); after
 * `idleMs` without a join it lets its tables go, so a superseded generation's memory is not
 * held by an idle worker.
 */
export class JoinRunner {
  private worker: Worker | null = null;
  /** uids of the tables the worker holds, least recent first (mirrors its map) */
  private held: number[] = [];
  private readonly queue: Job[] = [];
  private current: Job | null = null;
  /** the worker reports a join started (tests abort a join in progress) */
  private currentStarted = false;
  private readonly cancel = new Int32Array(new SharedArrayBuffer(4));
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private memoryWaiters: Array<(m: WorkerMemory) => void> = [];
  private closed = false;
  private counts = { started: 0, finished: 0, stopped: 0, dropped: 0 };

  constructor(private readonly idleMs = 10_000) {}

  /** The join of `bytes` over `table` (the generation `uid`'s); rejects with JoinAbandoned once `signal` aborts. */
  run(table: Table, uid: number, bytes: Uint8Array, request: JoinRequest, signal: AbortSignal | undefined): Promise<JoinOutcome> {
    if (this.closed) return Promise.reject(new Error('the join runner is closed'));
    if (signal?.aborted === true) return Promise.reject(new JoinAbandoned());
    return new Promise((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        table,
        uid,
        bytes,
        request,
        signal,
        onAbort: () => this.abandon(job),
        resolve,
        reject,
      };
      signal?.addEventListener('abort', job.onAbort, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  stats(): JoinRunnerStats {
    return { ...this.counts, busy: this.current !== null && this.currentStarted };
  }

  /** The worker's heap after a full collection, once it has no join (null: no worker is running). */
  workerMemory(): Promise<WorkerMemory | null> {
    const w = this.worker;
    if (w === null) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.memoryWaiters.push(resolve);
      w.postMessage({ type: 'memory' } satisfies ToJoinWorker);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, () => job.reject(new Error('the join runner is closed')));
    await this.stop();
  }

  private abandon(job: Job): void {
    const i = this.queue.indexOf(job);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.counts.dropped++;
    } else if (this.current === job) {
      // The worker stops at its next check; the answer it would have made is not waited for.
      Atomics.store(this.cancel, 0, 1);
    } else return;
    this.settle(job, () => job.reject(new JoinAbandoned()));
  }

  /** Settles a job once: its listener is removed and it is forgotten by whoever still points at it. */
  private settle(job: Job, how: () => void): void {
    job.signal?.removeEventListener('abort', job.onAbort);
    how();
  }

  private pump(): void {
    if (this.current !== null || this.queue.length === 0) return;
    if (this.idleTimer !== null) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    const job = this.queue.shift()!;
    const w = this.worker ?? this.spawn();
    this.current = job;
    this.currentStarted = false;
    Atomics.store(this.cancel, 0, 0);
    const known = this.held.indexOf(job.uid);
    const evict: number[] = [];
    if (known >= 0) this.held.splice(known, 1);
    this.held.push(job.uid);
    while (this.held.length > TABLES_HELD) evict.push(this.held.shift()!);
    const bytes = job.bytes;
    // The body moves to the worker when it is a buffer of its own; a view into a larger one is copied.
    const own = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const m: ToJoinWorker = {
      type: 'job',
      id: job.id,
      uid: job.uid,
      table: known >= 0 ? null : tableToTransfer(job.table),
      evict,
      bytes,
      request: job.request,
    };
    w.postMessage(m, own ? [bytes.buffer as ArrayBuffer] : []);
    this.counts.started++;
  }

  private spawn(): Worker {
    const data: JoinWorkerData = { cancel: this.cancel };
    const w = spawnModuleWorker(new URL(import.meta.url.endsWith('.ts') ? './join-worker.ts' : './join-worker.js', import.meta.url), { workerData: data });
    w.unref();
    this.worker = w;
    this.held = [];
    w.on('message', (m: FromJoinWorker) => this.onMessage(m));
    w.on('error', (e) => this.lost(w, e));
    w.on('exit', (code) => this.lost(w, new Error(`the join worker exited (code ${code})`)));
    return w;
  }

  private onMessage(m: FromJoinWorker): void {
    if (m.type === 'memory') {
      for (const waiter of this.memoryWaiters.splice(0)) waiter(m.memory);
      return;
    }
    const job = this.current;
    if (job === null || job.id !== m.id) return;
    if (m.type === 'started') {
      this.currentStarted = true;
      return;
    }
    this.current = null;
    if (m.ok) {
      this.counts.finished++;
      this.settle(job, () => job.resolve({ body: m.body, count: m.count, matched: m.matched, anyBeforeFloor: m.anyBeforeFloor }));
    } else if (m.cancelled) {
      // already rejected when its client went away
      this.counts.stopped++;
    } else {
      this.counts.finished++;
      const e = m.error;
      this.settle(job, () =>
        job.reject(e !== null ? new ApiError(e.code, e.message, e.param ?? undefined) : new Error(`the join failed: ${m.internal ?? ''}`)),
      );
    }
    this.next();
  }

  private next(): void {
    if (this.queue.length > 0) return this.pump();
    if (this.closed || this.worker === null) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.current !== null || this.queue.length > 0 || this.worker === null || this.held.length === 0) return;
      this.worker.postMessage({ type: 'drop', uids: this.held } satisfies ToJoinWorker);
      this.held = [];
    }, this.idleMs);
    this.idleTimer.unref();
  }

  /** The worker died (a crash, or its exit): the join in it fails, the next one gets a fresh worker. */
  private lost(w: Worker, e: Error): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.held = [];
    for (const waiter of this.memoryWaiters.splice(0)) waiter({ heapUsed: 0, external: 0 });
    const job = this.current;
    this.current = null;
    if (job !== null) this.settle(job, () => job.reject(e));
    if (!this.closed) this.pump();
  }

  private async stop(): Promise<void> {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const w = this.worker;
    this.worker = null;
    this.held = [];
    if (w !== null) await w.terminate();
  }
}
