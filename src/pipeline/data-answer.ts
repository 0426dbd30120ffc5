import type { Format } from '../format/negotiate.js';
import type { HeaderBlock } from '../http/header-block.js';
import type { RecordId } from '../http/record-id.js';
import type { HttpRequest } from '../http/types.js';
import type { RowArenaMemory } from '../format/arenas/row-arena.js';
import type { RowCacheStats } from '../format/arenas/row-cache.js';
import type { DataEndpointKind } from './data-page.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { GenerationSupply } from '../generations/generation-supply.js';
import type { ResponseCacheStats } from '../cache/response-cache.js';
import type { ServeOptions } from '../config/serve-options.js';

/**
 * What a data request answers, before the transport: a 200 or a 304. An answer given at
 * once is the thread's own object, refilled by the next request, like its header block and
 * body; an answer that comes later (a promise) is owned.
 */
export interface DataAnswer {
  readonly status: 200 | 304;
  /** vary, etag, cache-control, content-encoding and the envelope's headers: a reused block, or (async answers) owned */
  readonly headerBlock: HeaderBlock;
  readonly contentType: string;
  /** a view valid until the next call, or (async answers) owned */
  readonly body: Uint8Array;
  /** for metrics and the access log */
  readonly rows: number;
  readonly format: Format;
}

/**
 * `GET /{product}/{dataset}` (kind 'rows', the default), `.../walk_forward` and
 * `.../vintages`: the request in, the answer out (async only when a large body is
 * compressed off-thread).
 */
export interface DataEndpoint {
  (slot: DatasetSlot, req: HttpRequest, recordId: RecordId, kind?: DataEndpointKind): DataAnswer | Promise<DataAnswer>;
  /** what the thread's caches have done (null: that cache is off) */
  cacheStats(): { readonly response: ResponseCacheStats | null; readonly rows: RowCacheStats | null };
}

/** The serve options the data endpoints read (serve-options.ts). */
export type DataEndpointOptions = Pick<ServeOptions, 'responseCacheBytes' | 'rowCacheBytes' | 'pageCacheBytes' | 'workers'>;

/** What the data endpoints share with the rest of the process. */
export interface DataEndpointShared {
  /** a row arena shared with other serving threads, used instead of a fresh one of rowCacheBytes; null = none */
  readonly rowArena?: RowArenaMemory | null;
  /** where generations this thread does not hold come from (contract 12); null = nowhere (cursor_expired, generation_unavailable) */
  readonly supply?: GenerationSupply | null;
}
