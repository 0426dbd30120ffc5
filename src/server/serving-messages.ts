import type { AuthFailLimit } from '../auth/auth-throttle.js';
import type { KeysConfig } from '../auth/keys-file.js';
import type { RateLimiterState } from '../auth/rate-limiter.js';
import type { LogLevel } from '../log/logger.js';
import type { MetricsSnapshot } from '../metrics/aggregate.js';
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
  readonly accessLog: boolean;
  readonly logLevel: LogLevel | null;
  readonly responseCacheBytes: number;
  readonly rowCacheBytes: number;
  /** the thread's label in per-thread metrics (event-loop lag) */
  readonly thread: string;
  /** `--datasets` as given (DatasetSelection.text): which datasets are served */
  readonly datasets: string;
  readonly authFailLimit: AuthFailLimit;
  /** `--trusted-proxies` as given (TrustedProxies.text) */
  readonly trustedProxies: string;
}

export interface GenerationMessage {
  readonly type: 'generation';
  readonly dataset: string;
  readonly number: number;
  readonly manifest: Manifest;
  readonly table: TableTransfer;
  readonly loadedAtMs: number;
  readonly loadMs: number;
  /** the superseded generations the loading thread still holds for this dataset after the swap */
  readonly retained: readonly number[];
}

export interface SlotMessage {
  readonly type: 'slot';
  readonly dataset: string;
  readonly status: SlotStatus;
}

/** What the loading thread asks of every serving thread, each answering with a 'call-reply' of the same id. */
export type ServingCall = 'metrics' | 'stop-listening' | 'idle';

/** What the loading thread does for a serving thread (admin endpoints need the loader or every thread). */
export type AdminOp = 'refresh' | 'status' | 'metrics';

export type ToServing =
  | ServingInit
  | GenerationMessage
  | SlotMessage
  | { readonly type: 'ready' }
  /** the loading thread's retention released generations: keep only these superseded ones */
  | { readonly type: 'retained'; readonly dataset: string; readonly numbers: readonly number[] }
  /** SIGTERM: /readyz answers 503 from now on */
  | { readonly type: 'drain' }
  /** a reloaded keys file and the rate-limit buckets for it (shared by every thread) */
  | { readonly type: 'keys'; readonly keys: KeysConfig; readonly limiter: RateLimiterState }
  | { readonly type: 'call'; readonly id: number; readonly op: ServingCall }
  | { readonly type: 'admin-reply'; readonly id: number; readonly body: Uint8Array | null; readonly error: string | null }
  | { readonly type: 'close' };

export type FromServing =
  | { readonly type: 'listening'; readonly port: number }
  | { readonly type: 'listen-failed'; readonly error: string }
  | { readonly type: 'admin'; readonly id: number; readonly op: AdminOp }
  /** a cursor was answered from this superseded generation (throttled per generation) */
  | { readonly type: 'touched'; readonly dataset: string; readonly generation: number }
  /** the answer to a 'call': a metrics snapshot, or null for the others */
  | { readonly type: 'call-reply'; readonly id: number; readonly value: MetricsSnapshot | null }
  | { readonly type: 'closed' };
