import type { KeysConfig } from '../auth/keys-file.js';
import type { RateLimiterState } from '../auth/rate-limiter.js';
import type { LogLevel } from '../log/logger.js';
import type { Manifest } from '../snapshot/manifest.js';
import type { TableTransfer } from '../store/table-transfer.js';
import type { SlotStatus } from './dataset-slot.js';

/** Messages between the loading thread and the serving threads (serving-pool.ts, serving-worker.ts). */
export interface ServingInit {
  readonly type: 'init';
  readonly host: string;
  readonly port: number;
  readonly keys: KeysConfig;
  readonly limiter: RateLimiterState;
  /** the injected clock's shared cell, when it has one (tests); else the system clock */
  readonly clock: Float64Array | undefined;
  readonly retainedBytes: number | undefined;
  readonly accessLog: boolean;
  readonly logLevel: LogLevel | null;
  readonly responseCacheBytes: number;
  readonly rowCacheBytes: number;
}

export interface GenerationMessage {
  readonly type: 'generation';
  readonly dataset: string;
  readonly number: number;
  readonly manifest: Manifest;
  readonly table: TableTransfer;
  readonly loadedAtMs: number;
  readonly loadMs: number;
}

export interface SlotMessage {
  readonly type: 'slot';
  readonly dataset: string;
  readonly status: SlotStatus;
}

export type ToServing =
  | ServingInit
  | GenerationMessage
  | SlotMessage
  | { readonly type: 'ready' }
  | { readonly type: 'admin-reply'; readonly id: number; readonly body: Uint8Array | null; readonly error: string | null }
  | { readonly type: 'close' };

export type FromServing =
  | { readonly type: 'listening'; readonly port: number }
  | { readonly type: 'listen-failed'; readonly error: string }
  | { readonly type: 'admin'; readonly id: number; readonly op: 'refresh' | 'status' }
  | { readonly type: 'closed' };
