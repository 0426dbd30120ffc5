import type { ErrorCode } from '../errors.js';
import type { JoinRequest } from '../join/join-compute.js';
import type { TableTransfer } from '../store/table-transfer.js';

/** What a join worker starts with: the cell the serving thread sets (1) to stop the join in progress. */
export interface JoinWorkerData {
  readonly cancel: Int32Array;
}

/** A join worker's heap after a full collection (bytes): what a test of memory reads. */
export interface WorkerMemory {
  readonly heapUsed: number;
  /** ArrayBuffers and other memory outside the heap that this isolate holds */
  readonly external: number;
}

/** Messages between a join runner (join-runner.ts) and its worker (join-worker.ts). */
export type ToJoinWorker =
  | {
      readonly type: 'job';
      readonly id: number;
      /** the generation's uid: its table is sent once, then named */
      readonly uid: number;
      readonly table: TableTransfer | null;
      /** tables the worker drops before this job (the runner keeps a few, most recent first) */
      readonly evict: readonly number[];
      readonly bytes: Uint8Array;
      readonly request: JoinRequest;
    }
  | { readonly type: 'memory' }
  /** idle: the worker lets these tables go */
  | { readonly type: 'drop'; readonly uids: readonly number[] };

export type FromJoinWorker =
  | { readonly type: 'started'; readonly id: number }
  | {
      readonly type: 'done';
      readonly id: number;
      readonly ok: true;
      readonly body: Uint8Array;
      readonly count: number;
      readonly matched: number;
      readonly anyBeforeFloor: boolean;
    }
  | {
      readonly type: 'done';
      readonly id: number;
      readonly ok: false;
      /** stopped at a check: the client went away */
      readonly cancelled: boolean;
      /** a 4xx of the join (the events or the columns) */
      readonly error: { readonly code: ErrorCode; readonly message: string; readonly param: string | null } | null;
      /** anything else: a fault, answered 500 */
      readonly internal: string | null;
    }
  | { readonly type: 'memory'; readonly memory: WorkerMemory };
