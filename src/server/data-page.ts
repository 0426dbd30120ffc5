import { ApiError } from '../errors.js';
import type { OutputColumn } from '../format/page-view.js';
import type { ResolvedPage } from '../format/resolved-page.js';
import { decodeCursor, encodeCursor } from '../query/cursor.js';
import type { PageResolver, Resume } from '../query/page-resolver.js';
import { parseQuery } from '../query/parse-query.js';
import type { Query } from '../query/query.js';
import { InstantMicros } from '../render/envelope.js';
import type { DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';

/** Why a dataset has nothing to serve, in words for the caller (details are in /admin/status and the log). */
const UNAVAILABLE: Readonly<Record<DatasetSlot['state'], string>> = {
  pending: 'not tried yet',
  loaded: 'no generation',
  missing: 'there is no snapshot at the source',
  refused: 'its snapshot was refused',
  unreachable: 'the snapshot source cannot be reached',
};

/** A data request parsed and pinned to the generation that answers it. */
export interface LocatedQuery {
  readonly slot: DatasetSlot;
  readonly query: Query;
  readonly gen: Generation;
  readonly resume: Resume;
}

/**
 * parse: the raw query -> a validated Query and the generation answering it (the current
 * one, or the cursor's). Throws the contract's errors (400 on the query or cursor, 503
 * while loading or when the dataset has no generation).
 */
export function locateQuery(registry: DatasetRegistry, slot: DatasetSlot, rawQuery: string): LocatedQuery {
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
  return { slot, query, gen, resume };
}

/**
 * resolve: the page of `GET /{product}/{dataset}` (contract 2) and its envelope, computed
 * once, before and apart from any writer, with the output layout the request asked for
 * (every stored column, or a projection). The view's rows are the resolver's scratch.
 */
export function resolveDataPage(resolver: PageResolver, located: LocatedQuery, columns: readonly OutputColumn[] = located.gen.outputColumns): ResolvedPage {
  const { slot, query, gen, resume } = located;
  const table = gen.table;
  const page = resolver.resolve(gen, query, resume);
  const t = query.asOfUs ?? Infinity;
  const nextCursor = page.next === null ? null : encodeCursor({ generation: gen.number, fingerprint: query.fingerprint, total: page.total, ...page.next });
  return {
    view: { columns, rows: page.rows, count: page.count, seriesKey: table.seriesKey },
    meta: {
      productId: slot.product.id,
      count: page.count,
      totalCount: page.total,
      nextCursor,
      generation: gen.number,
      dataLatestDate: table.latestDateByThr.query(t),
      maxObservedUs: table.maxObservedByThr.query(t),
      asOfUs: query.asOfUs,
      extensions: [
        ['generation', gen.number],
        ['as_of', query.asOfUs === null ? null : new InstantMicros(query.asOfUs)],
        ['vintage_floor', slot.product.floor],
        ['floor_applied', query.asOfUs !== null && query.asOfUs < slot.floorUs],
      ],
    },
  };
}
