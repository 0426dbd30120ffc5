import { ApiError, type HeaderPairs } from '../errors.js';
import type { OutputColumn } from '../format/page-view.js';
import type { ExtensionValue, ResolvedPage } from '../format/resolved-page.js';
import type { CanonicalForm } from '../query/canonical-text.js';
import { decodeCursor, encodeCursor } from '../query/cursor.js';
import type { Page, PageResolver, Resume } from '../query/page-resolver.js';
import { parseQuery } from '../query/parse-query.js';
import { parseVintages, type VintagesQuery } from '../query/parse-vintages.js';
import { parseWalkForward, type WalkForwardQuery } from '../query/parse-walk-forward.js';
import type { Query } from '../query/query.js';
import { QueryScratch } from '../query/query-scratch.js';
import type { VintagesResolver } from '../query/vintages-resolver.js';
import type { WalkForwardResolver } from '../query/walk-forward-resolver.js';
import { dayEndUs } from '../time/instant.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { Generation } from '../generations/generation.js';
import type { GenerationSupply } from '../generations/generation-supply.js';
import type { PageScratch } from './page-scratch.js';
import type { Mutable } from '../mutable.js';

/** Why a dataset has nothing to serve, in words for the caller (details are in /admin/status and the log). */
const UNAVAILABLE: Readonly<Record<DatasetSlot['state'], string>> = {
  pending: 'not tried yet',
  loaded: 'no generation',
  missing: 'there is no snapshot at the source',
  refused: 'its snapshot was refused',
  unreachable: 'the snapshot source cannot be reached',
};

const RETRY_SOON: HeaderPairs = [['Retry-After', '1']];
/** A missing or refused snapshot is looked for again at the next refresh (30 s by default). */
const RETRY_LATER: HeaderPairs = [['Retry-After', '30']];

/** What any data endpoint's parsed query has for pinning and caching. */
export interface PinnableQuery {
  /** the dataset and every parameter but `cursor`, normalised (cache keys, ETags): CanonicalForm */
  readonly canonical: CanonicalForm;
  readonly fingerprint: number;
  readonly cursor: string | null;
  /** `generation=N` (contract 12); null = the served one */
  readonly generation: number | null;
}

/**
 * How a request is pinned to its generation: the registry, who hears that a superseded
 * generation was used (the memory budget), and a generation fetched for this very request
 * (after a MissingGeneration), which answers it even if released meanwhile.
 */
export interface PinContext {
  /** whether the server has tried every dataset (a slot with nothing: not_ready before, dataset_unavailable after) */
  readonly registry: Pick<DatasetRegistry, 'ready'>;
  readonly supply: GenerationSupply | null;
  readonly fetched: Generation | null;
}

/**
 * Thrown by pin when the generation a request names (its cursor's or `generation=N`) is not
 * held on this thread: the caller fetches it (GenerationSupply) and pins again. Not an
 * error of the caller's: only when the fetch fails is the answer 400.
 */
export class MissingGeneration {
  constructor(
    readonly number: number,
    /** named by a cursor (a failure is cursor_expired) or by `generation` (generation_unavailable) */
    readonly viaCursor: boolean,
  ) {}
}

/** A data request parsed and pinned to the generation that answers it. */
export interface LocatedQuery<Q extends PinnableQuery = Query> {
  readonly slot: DatasetSlot;
  readonly query: Q;
  readonly gen: Generation;
  readonly resume: Resume;
}

/** The data endpoints (contract 2, 10, 11): each parses its own parameters and resolves its own pages. */
export type DataEndpointKind = 'rows' | 'walk_forward' | 'vintages';

/**
 * A request of one endpoint, parsed and pinned, not yet resolved: the endpoint-independent
 * part of the pipeline (ETag, response cache, writers) needs only these.
 */
export interface PinnedRequest {
  readonly gen: Generation;
  readonly canonical: CanonicalForm;
  readonly cursor: string | null;
  /** `as_of` and `generation` both fixed (contract 12): the answer never changes, so it may be cached as immutable */
  readonly immutable: boolean;
  /** resolve: the page and its envelope, with `stored` (every stored column, or a projection) as the stored part of the layout (the thread's scratch: see PageScratch) */
  resolve(stored: readonly OutputColumn[]): ResolvedPage;
}

/** The scratch a serving thread resolves pages in: one resolver per endpoint, and the page they fill. */
export interface Resolvers {
  readonly rows: PageResolver;
  readonly walkForward: WalkForwardResolver;
  readonly vintages: VintagesResolver;
  readonly page: PageScratch;
}

/**
 * parse -> pin for one endpoint, into the thread's Pinned: throws the contract's 400s, 503
 * while nothing is loaded, and MissingGeneration when the generation it names must be
 * fetched first.
 */
export function pinRequest(kind: DataEndpointKind, into: Pinned, ctx: PinContext, slot: DatasetSlot, rawQuery: string): PinnedRequest {
  switch (kind) {
    case 'rows': {
      const query = parseQuery(rawQuery, slot.product, slot.dataset, into.queries);
      pin(ctx, slot, query, into);
      return into.as(kind, query.asOfUs !== null);
    }
    case 'walk_forward':
      pin(ctx, slot, parseWalkForward(rawQuery, slot.product, slot.dataset, slot.floorUs), into);
      // Each decision date is its own as_of: with a generation, nothing of the answer can change.
      return into.as(kind, true);
    case 'vintages': {
      const query = parseVintages(rawQuery, slot.product, slot.dataset);
      pin(ctx, slot, query, into);
      return into.as(kind, query.asOfUs !== null);
    }
  }
}

/**
 * The endpoint-independent view of a pinned request, and the request it pins: one object
 * per serving thread, refilled by every pinRequest (read at once, like the page it
 * resolves), that resolves by its kind. A closure per request cost two more objects, and
 * an object per request two more.
 */
export class Pinned implements PinnedRequest, Mutable<LocatedQuery<PinnableQuery>> {
  slot!: DatasetSlot;
  query!: PinnableQuery;
  gen!: Generation;
  resume: Resume = null;
  canonical: CanonicalForm = '';
  cursor: string | null = null;
  immutable = false;
  private kind: DataEndpointKind = 'rows';
  /** what the rows endpoint parses into (refilled per request, like the page it resolves) */
  readonly queries = new QueryScratch();

  constructor(private readonly resolvers: Resolvers) {}

  /** Completes a pin (its query, generation and resume set) as a request of `kind`; `asOfFixed`: a generation makes the answer immutable. */
  as(kind: DataEndpointKind, asOfFixed: boolean): this {
    this.kind = kind;
    this.canonical = this.query.canonical;
    this.cursor = this.query.cursor;
    this.immutable = asOfFixed && this.query.generation !== null;
    return this;
  }

  /** This object as the located query it holds (its query's type is named by `kind`). */
  private located(): LocatedQuery<PinnableQuery> {
    return this;
  }

  resolve(stored: readonly OutputColumn[]): ResolvedPage {
    const resolvers = this.resolvers;
    const located = this.located();
    // pinRequest pairs each kind with its own parser's query: the casts name that pairing.
    switch (this.kind) {
      case 'rows':
        return resolveDataPage(resolvers.rows, resolvers.page, located as LocatedQuery, stored);
      case 'walk_forward':
        return resolveWalkForwardPage(resolvers.walkForward, resolvers.page, located as LocatedQuery<WalkForwardQuery>, stored);
      case 'vintages':
        return resolveVintagesPage(resolvers.vintages, resolvers.page, located as LocatedQuery<VintagesQuery>, stored);
    }
  }
}

/**
 * The generation answering a parsed query, into `into` with the query and where a chain
 * resumes: its cursor's (contract 2: a chain is answered from one generation), the one
 * `generation=N` names (contract 12), or the current one. 400 for a cursor of another
 * query or one that does not decode, MissingGeneration when the generation named is not
 * held here, 503 when the dataset has nothing loaded.
 */
export function pin(ctx: PinContext, slot: DatasetSlot, query: PinnableQuery, into: Mutable<LocatedQuery<PinnableQuery>>): void {
  const { registry } = ctx;
  let gen = slot.current;
  // Retry-After (RFC 9110 10.2.3): a hint for clients that retry (the typed client honours it).
  if (gen === null && !registry.ready) throw new ApiError('not_ready', 'the server is still loading snapshots; retry shortly', undefined, RETRY_SOON);
  if (gen === null) throw new ApiError('dataset_unavailable', `${slot.id} is not loaded: ${UNAVAILABLE[slot.state]}`, undefined, RETRY_LATER);
  let resume: Resume = null;
  let wanted = query.generation;
  if (query.cursor !== null) {
    const c = decodeCursor(query.cursor);
    if (c === null || c.fingerprint !== query.fingerprint) {
      throw new ApiError('invalid_cursor', 'cursor is malformed or belongs to a different query', 'cursor');
    }
    wanted = c.generation;
    resume = c;
  }
  if (wanted !== null && wanted !== gen.number) {
    const held = ctx.fetched?.number === wanted ? ctx.fetched : slot.find(wanted);
    if (held === null) throw new MissingGeneration(wanted, resume !== null);
    ctx.supply?.touched(slot, wanted);
    gen = held;
  }
  into.slot = slot;
  into.query = query;
  into.gen = gen;
  into.resume = resume;
}

/** The metadata fields after the spec's, per endpoint (contract 2, 10, 11, 12), in the order they are written. */
const ROWS_EXTENSIONS = ['generation', 'as_of', 'vintage_floor', 'floor_applied'] as const;
const WALK_FORWARD_EXTENSIONS = ['generation', 'decisions', 'vintage_floor'] as const;
const VINTAGES_EXTENSIONS = ['generation', 'as_of', 'release', 'vintage_floor'] as const;

/**
 * resolve: the page of `GET /{product}/{dataset}` (contract 2) and its envelope, computed
 * once, before and apart from any writer, with the output layout the request asked for
 * (every stored column, or a projection), into the thread's PageScratch (valid until the
 * next resolve, like the resolver's rows).
 */
export function resolveDataPage(resolver: PageResolver, into: PageScratch, located: LocatedQuery, columns: readonly OutputColumn[]): ResolvedPage {
  const { slot, query, gen } = located;
  const page = resolver.resolve(gen, query, located.resume);
  const v = into.rowsValues;
  v[0] = gen.number;
  v[1] = asOfValue(into, query.asOfUs);
  v[2] = slot.product.floor;
  v[3] = query.asOfUs !== null && query.asOfUs < slot.floorUs;
  into.envelope(query.asOfUs, v[3], ROWS_EXTENSIONS, v);
  return fill(into, located, page, columns);
}

/**
 * `GET /{product}/{dataset}/walk_forward` (contract 10): `decision_date` first, then the
 * stored columns, then `floor_applied` (contract 16). data_latest_date and data_age_hours are those of as_of = decision_to.
 */
export function resolveWalkForwardPage(
  resolver: WalkForwardResolver,
  into: PageScratch,
  located: LocatedQuery<WalkForwardQuery>,
  stored: readonly OutputColumn[],
): ResolvedPage {
  const { slot, query, gen } = located;
  const page = resolver.resolve(gen, query, located.resume);
  const v = into.walkForwardValues;
  v[0] = gen.number;
  v[1] = query.decisions;
  v[2] = slot.product.floor;
  const columns = into.withPrefixAndSuffix(page.decisionDate, stored, page.floorApplied);
  into.envelope(dayEndUs(query.decisionTo), query.floorApplied, WALK_FORWARD_EXTENSIONS, v);
  return fill(into, located, page, columns);
}

/** `GET /{product}/{dataset}/vintages` (contract 11): the stored columns, then `visible_from` and `visible_to`. */
export function resolveVintagesPage(
  resolver: VintagesResolver,
  into: PageScratch,
  located: LocatedQuery<VintagesQuery>,
  stored: readonly OutputColumn[],
): ResolvedPage {
  const { slot, query, gen } = located;
  const page = resolver.resolve(gen, query, located.resume);
  const v = into.vintagesValues;
  v[0] = gen.number;
  v[1] = asOfValue(into, query.asOfUs);
  v[2] = query.firstOnly ? 'first' : 'all';
  v[3] = slot.product.floor;
  const floorApplied = query.asOfUs !== null && query.asOfUs < slot.floorUs;
  into.envelope(query.asOfUs, floorApplied, VINTAGES_EXTENSIONS, v);
  return fill(into, located, page, into.withSuffix(stored, page.visibleFrom, page.visibleTo));
}

/** The request's as_of as an extension value: the scratch's instant, refilled, or null. */
function asOfValue(into: PageScratch, asOfUs: number | null): ExtensionValue {
  if (asOfUs === null) return null;
  into.asOf.us = asOfUs;
  return into.asOf;
}

/**
 * The page's view and the rest of its envelope into the scratch, whose endpoint part is set
 * (PageScratch.envelope): contract 4's data_latest_date and data_age_hours under its as_of.
 */
function fill(into: PageScratch, located: LocatedQuery<PinnableQuery>, page: Page, columns: readonly OutputColumn[]): ResolvedPage {
  const { slot, query, gen } = located;
  const meta = into.meta;
  const t = meta.asOfUs ?? Infinity;
  const view = into.view;
  view.columns = columns;
  view.rows = page.rows;
  view.count = page.count;
  view.seriesKey = gen.table.seriesKey;
  meta.productId = slot.product.id;
  meta.count = page.count;
  meta.totalCount = page.total;
  meta.nextCursor = page.next === null ? null : encodeCursor({ generation: gen.number, fingerprint: query.fingerprint, total: page.total, ...page.next });
  meta.generation = gen.number;
  meta.dataLatestDate = gen.table.latestDateByThr.query(t);
  meta.maxObservedUs = gen.table.maxObservedByThr.query(t);
  return into;
}
