import type { AuthFailureMemory } from '../auth/failure-table.js';
import type { KeysConfig } from '../auth/keys-file.js';
import type { RateLimiterState } from '../auth/rate-limiter.js';
import type { ServeOptions } from '../config/serve-options.js';
import type { RowArenaMemory } from '../format/arenas/row-arena.js';
import type { MetricsSnapshot } from '../metrics/aggregate.js';
import type { Manifest } from '../snapshot/manifest.js';
import type { TableTransfer } from '../store/table-transfer.js';
import type { SlotStatus } from '../generations/dataset-slot.js';
import type { UnavailableKind } from '../generations/generation-supply.js';

/** Messages between the loading thread and the serving threads (serving-pool.ts, serving-worker.ts). */
export interface ServingInit {
  readonly type: 'init';
  /** the server's options, whole (plain data): each thread reads what it needs */
  readonly options: ServeOptions;
  /** the port every thread listens on: options.port, or the one picked for port 0 */
  readonly port: number;
  readonly keys: KeysConfig;
  readonly limiter: RateLimiterState;
  /** the injected clock's shared cell, when it has one (tests); else the system clock */
  readonly clock: Float64Array | undefined;
  /** the row arena every serving thread shares (made once by the loading thread); null = no row cache */
  readonly rowArena: RowArenaMemory | null;
  /** the thread's label in per-thread metrics (event-loop lag) */
  readonly thread: string;
  /** the catalog in force when the thread starts, as catalog.json writes it (later ones come as 'catalog' messages) */
  readonly catalog: object;
  /** the failed-authentication table every serving thread shares (made once by the loading thread) */
  readonly authFailures: AuthFailureMemory;
}

/**
 * A generation's table for the serving threads: 'generation' = the new live one (swap),
 * 'retained' = one loaded from history for a cursor or `generation=N` (kept beside it).
 */
export interface GenerationMessage {
  readonly type: 'generation' | 'retained';
  readonly dataset: string;
  readonly number: number;
  /** Generation.uid, from the loading thread */
  readonly uid: number;
  readonly manifest: Manifest;
  readonly table: TableTransfer;
  readonly loadedAtMs: number;
  readonly loadMs: number;
}

/**
 * A new catalog in force (contract 13), as catalog.json writes it, with what the loading
 * thread did to the datasets it changed: the live generation re-floored (a new floor), or
 * none (a filter its snapshot lacks). Applied whole in one message turn on each thread.
 */
export interface CatalogMessage {
  readonly type: 'catalog';
  readonly catalog: object;
  readonly changed: ReadonlyArray<{ readonly dataset: string; readonly generation: GenerationMessage | null; readonly status: SlotStatus }>;
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
  | CatalogMessage
  | { readonly type: 'ready' }
  /** SIGTERM: /readyz answers 503 from now on */
  | { readonly type: 'drain' }
  /** a reloaded keys file and the rate-limit buckets for it (shared by every thread) */
  | { readonly type: 'keys'; readonly keys: KeysConfig; readonly limiter: RateLimiterState }
  | { readonly type: 'call'; readonly id: number; readonly op: ServingCall }
  | { readonly type: 'admin-reply'; readonly id: number; readonly body: Uint8Array | null; readonly error: string | null }
  /** the memory budget let a superseded generation go: drop it */
  | { readonly type: 'release'; readonly dataset: string; readonly number: number }
  /** the answer to a 'fetch': the generation itself (sent as 'retained' just before), or why it cannot be had */
  | { readonly type: 'fetched'; readonly id: number; readonly error: { readonly kind: UnavailableKind; readonly message: string } | null }
  | { readonly type: 'close' };

export type FromServing =
  | { readonly type: 'listening'; readonly port: number }
  | { readonly type: 'listen-failed'; readonly error: string }
  | { readonly type: 'admin'; readonly id: number; readonly op: AdminOp }
  /** the answer to a 'call': a metrics snapshot, or null for the others */
  | { readonly type: 'call-reply'; readonly id: number; readonly value: MetricsSnapshot | null }
  | { readonly type: 'closed' }
  /** a generation this thread does not hold: the loading thread loads it (once) and sends it to every thread */
  | { readonly type: 'fetch'; readonly id: number; readonly dataset: string; readonly number: number }
  /** a superseded generation answered a request here (the budget's recency) */
  | { readonly type: 'touch'; readonly dataset: string; readonly number: number };
