import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.js';
import { decodeCursor, encodeCursor } from '../query/cursor.js';
import { parseQuery } from '../query/parse-query.js';
import type { Query } from '../query/query.js';
import { resolvePage, type Resume } from '../query/resolve.js';
import { ByteWriter } from '../render/byte-writer.js';
import { RowCache } from '../render/row-cache.js';
import type { RowRenderer } from '../render/row-renderer.js';
import { InstantMicros, writeEnvelopeHead, writeEnvelopeMetadata, type ExtensionValue } from '../render/envelope.js';
import type { Clock } from '../time/clock.js';
import type { DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import { Doorkeeper } from './doorkeeper.js';
import type { Generation } from './generation.js';

/** Why a dataset has nothing to serve, in words for the caller (details are in /readyz and the log). */
const UNAVAILABLE: Readonly<Record<DatasetSlot['state'], string>> = {
  pending: 'not tried yet',
  loaded: 'no generation',
  missing: 'there is no snapshot at the source',
  refused: 'its snapshot was refused',
  unreachable: 'the snapshot source cannot be reached',
};

/** `GET /{product}/{dataset}`: raw query in, response body out (a view valid until the next call). */
export type DataEndpoint = (slot: DatasetSlot, rawQuery: string, recordId: string) => Uint8Array;

/** What the per-request metadata needs besides the clock and the request id. */
interface PageMeta {
  readonly totalCount: number;
  readonly dataLatestDate: number | null;
  /** greatest visible str_observed_at (µs), for data_age_hours */
  readonly maxObserved: number | null;
  readonly asOfUs: number | null;
  readonly extensions: ReadonlyArray<readonly [string, ExtensionValue]>;
}

interface CachedBody {
  /**
   * The body up to `metadata` in [0, headLength), owned, with room after it: a hit writes
   * its metadata there and hands out the whole body without copying the head. A hit's
   * metadata only lives until the next request, which is all the caller needs.
   */
  body: Buffer;
  readonly headLength: number;
  readonly meta: PageMeta;
}

/** Room kept after a cached head for the per-request metadata (it grows if ever short). */
const METADATA_ROOM = 1024;

export interface DataEndpointOptions {
  /** bytes of rendered bodies kept for repeated queries; 0 = none */
  readonly responseCacheBytes: number;
  /** bytes of rendered rows kept for overlapping queries (RowCache); 0 = none */
  readonly rowCacheBytes: number;
}

type WriteRows = (renderer: RowRenderer, out: ByteWriter, rows: Int32Array, count: number) => void;

/**
 * parse -> resolve -> render for data requests. With `responseCacheBytes` > 0, bodies of
 * queries asked for a second time (Doorkeeper) are kept in a byte-bounded LRU keyed by
 * (dataset, generation, canonical query, cursor): a key names one generation, so a cached
 * body can never outlive or cross a generation, and the canonical query (not its hash)
 * means two queries never share an entry. Only metadata (retrieved_at, record_id,
 * data_age_hours) is written per request.
 */
export function createDataEndpoint(registry: DatasetRegistry, clock: Clock, options: DataEndpointOptions): DataEndpoint {
  const { responseCacheBytes, rowCacheBytes } = options;
  const out = new ByteWriter(256 * 1024);
  const rowCache = rowCacheBytes > 0 ? new RowCache(rowCacheBytes) : null;
  const writeRows: WriteRows =
    rowCache === null ? (r, w, rows, count) => r.writeRows(w, rows, count) : (r, w, rows, count) => r.writeRowsCached(w, rows, count, rowCache);

  function locate(slot: DatasetSlot, rawQuery: string): { query: Query; gen: Generation; resume: Resume } {
    const query = parseQuery(rawQuery, slot.product, slot.dataset);
    let gen = slot.current;
    if (gen === null && !registry.ready) throw new ApiError('not_ready', 'the server is still loading snapshots; retry shortly');
    if (gen === null) throw new ApiError('dataset_unavailable', `${slot.id} is not loaded: ${UNAVAILABLE[slot.state]}`);
    let resume: Resume = null;
    if (query.cursor !== null) {
      const c = decodeCursor(query.cursor);
      if (c === null || c.fingerprint !== query.fingerprint) {
        throw new ApiError('invalid_cursor', 'cursor is malformed or belongs to a different query', 'cursor');
      }
      gen = slot.find(c.generation);
      if (gen === null) throw new ApiError('cursor_expired', 'the snapshot generation of this cursor is no longer served; start the query again', 'cursor');
      resume = c;
    }
    return { query, gen, resume };
  }

  /** Writes the head of the body into `out` (reset first) and returns what the metadata needs. */
  function renderHead(slot: DatasetSlot, query: Query, gen: Generation, resume: Resume): PageMeta {
    const table = gen.table;
    const page = resolvePage(table, query, resume);
    const t = query.asOfUs ?? Infinity;
    const next = page.next === null ? null : encodeCursor({ generation: gen.number, fingerprint: query.fingerprint, total: page.total, ...page.next });
    out.reset();
    const renderer = gen.renderer;
    writeEnvelopeHead(out, { productId: slot.product.id, count: page.count, hasMore: next !== null, nextCursor: next }, (w) =>
      writeRows(renderer, w, page.rows, page.count),
    );
    return {
      totalCount: page.total,
      dataLatestDate: table.latestDateByThr.query(t),
      maxObserved: table.maxObservedByThr.query(t),
      asOfUs: query.asOfUs,
      extensions: [
        ['generation', gen.number],
        ['as_of', query.asOfUs === null ? null : new InstantMicros(query.asOfUs)],
        ['vintage_floor', slot.product.floor],
        ['floor_applied', query.asOfUs !== null && query.asOfUs < slot.floorUs],
      ],
    };
  }

  function finish(meta: PageMeta, recordId: string, w: ByteWriter = out): Uint8Array {
    const nowUs = clock.now() * 1000;
    const refUs = meta.asOfUs ?? nowUs;
    writeEnvelopeMetadata(w, {
      retrievedAtUs: nowUs,
      totalCount: meta.totalCount,
      recordId,
      dataLatestDate: meta.dataLatestDate,
      dataAgeHours: meta.maxObserved === null ? null : (refUs - meta.maxObserved) / 3_600_000_000,
      extensions: meta.extensions,
    });
    return w.view();
  }

  if (responseCacheBytes <= 0) {
    return (slot, rawQuery, recordId) => {
      const { query, gen, resume } = locate(slot, rawQuery);
      return finish(renderHead(slot, query, gen, resume), recordId);
    };
  }

  const cache = new LRUCache<string, CachedBody>({
    maxSize: responseCacheBytes,
    sizeCalculation: (v, k) => v.body.byteLength + 2 * k.length + 256,
  });
  const hitWriter = new ByteWriter(16);
  // About four times the bodies of a typical answer (33 KB) the cache can hold.
  const doorkeeper = new Doorkeeper(Math.ceil(responseCacheBytes / 8192));
  return (slot, rawQuery, recordId) => {
    const { query, gen, resume } = locate(slot, rawQuery);
    const key = `${slot.id}\u0001${gen.number}\u0001${query.canonical}\u0001${query.cursor ?? ''}`;
    const hit = cache.get(key);
    if (hit !== undefined) {
      hitWriter.buf = hit.body;
      hitWriter.pos = hit.headLength;
      const view = finish(hit.meta, recordId, hitWriter);
      hit.body = hitWriter.buf; // kept if the metadata ever outgrew the room
      return view;
    }
    const meta = renderHead(slot, query, gen, resume);
    if (!doorkeeper.admit(key)) return finish(meta, recordId);
    const body = Buffer.allocUnsafeSlow(out.pos + METADATA_ROOM);
    out.buf.copy(body, 0, 0, out.pos);
    cache.set(key, { body, headLength: out.pos, meta });
    return finish(meta, recordId);
  };
}
