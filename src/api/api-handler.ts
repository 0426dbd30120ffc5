import type { AuthThrottle } from '../auth/auth-throttle.js';
import { TrustedProxies } from '../auth/client-address.js';
import type { KeyRegistry } from '../auth/key-registry.js';
import { forEachRateLimitHeader, type RateLimiter } from '../auth/rate-limiter.js';
import { ApiError, type HeaderPairs } from '../errors.js';
import { recordIdText, type RecordId } from '../http/record-id.js';
import type { HttpRequest, HttpResponse, Handler } from '../http/types.js';
import type { AccessRecord } from '../log/access-log.js';
import type { Logger } from '../log/logger.js';
import { endpointOfPattern, type Endpoint, type FormatLabel, type RequestMetrics } from '../metrics/request-metrics.js';
import { renderError } from '../format/json/error-body.js';
import type { RowArenaMemory } from '../format/arenas/row-arena.js';
import type { Clock } from '../time/clock.js';
import type { AdminOps } from './admin.js';
import { apiRoutes } from './api-routes.js';
import type { DataEndpoint, DataEndpointOptions } from '../pipeline/data-answer.js';
import type { ServeOptions } from '../config/serve-options.js';
import { createDataEndpoint } from '../pipeline/data-endpoint.js';
import { ownAcrossAwait } from '../pipeline/ownership.js';
import type { GenerationSupply } from '../generations/generation-supply.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import { DatasetSlot } from '../generations/dataset-slot.js';
import { createJoinEndpoint } from '../pipeline/join-endpoint.js';
import { JoinRunner } from '../pipeline/join-runner.js';
import { notServedHere } from './not-served.js';
import type { RequestIds } from './request-ids.js';
import { Router, type RouteAnswer, type RouteRequest } from './router.js';
import type { Mutable } from '../mutable.js';

/** The serve options the API reads. */
export type ApiOptions = DataEndpointOptions & Pick<ServeOptions, 'trustedProxies' | 'joinInlineBytes'>;

export interface ApiDeps {
  readonly registry: DatasetRegistry;
  readonly keys: KeyRegistry;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly ids: RequestIds;
  readonly log: Logger;
  /** the serve options the API reads (serve-options.ts): the caches' sizes, the trusted proxies, where joins run */
  readonly options: ApiOptions;
  /** the operational endpoints; absent = they answer 404 */
  readonly admin?: AdminOps;
  /** a row arena shared with the other serving threads (allocated by the loading thread); used instead of options.rowCacheBytes */
  readonly rowArena?: RowArenaMemory | null;
  /** one record per answered request; absent = no access log */
  readonly access?: (r: AccessRecord) => void;
  /** this serving thread's request counters; absent = none kept */
  readonly metrics?: RequestMetrics;
  /** failed authentications per client address (`--auth-fail-limit`); absent = not throttled */
  readonly authThrottle?: AuthThrottle;
  /** where generations this thread does not hold come from (contract 12); absent = nowhere */
  readonly supply?: GenerationSupply;
}

/** The API as a function of a request, plus what its caches have done (tests assert hits; metrics may read them). */
export interface ApiHandler extends Handler {
  readonly cacheStats: DataEndpoint['cacheStats'];
  /** the join worker of this thread's large joins (tests read what it did); null = every join on this thread */
  readonly joins: JoinRunner | null;
  /** Stops what the handler runs beside the thread (its join worker). */
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json';
const NO_HEADERS: HeaderPairs = [];
const EMPTY_BODY = new Uint8Array(0);
/** A response to fill in (the handler's own, made once, or an async answer's). */
function blankResponse(): Mutable<HttpResponse> {
  return { status: 200, headers: NO_HEADERS, headerBlock: null, contentType: '', requestId: '', body: EMPTY_BODY };
}
/** What the handler's route request holds before its first request (never read). */
const NO_REQUEST: HttpRequest = { method: '', path: '', rawQuery: '', apiKey: null, accept: '', acceptEncoding: '', ifNoneMatch: '' };

/** What the access log and the metrics say of a request once it is answered: one per handler, refilled per request (borrowed), or an async answer's own. */
interface Trace {
  readonly req: HttpRequest;
  readonly recordId: RecordId;
  /** headers every answer to the request carries (RateLimit-*) */
  readonly headers: HeaderPairs;
  readonly keyId: string | null;
  readonly startedMs: number;
  /** metrics labels: the dataset slot and endpoint of the route answering, if one does */
  readonly dataset: string;
  readonly endpoint: Endpoint;
}

function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown }).then === 'function';
}

/** The per-request headers, then the answer's own (allocates only when both have some). */
function joined(a: HeaderPairs, b: HeaderPairs | undefined): HeaderPairs {
  if (b === undefined || b.length === 0) return a;
  return a.length === 0 ? b : [...a, ...b];
}

/**
 * The whole API as a plain function of a request: route -> authenticate -> rate-limit ->
 * handler (parse -> resolve -> write for data). No socket here; the uWS layer only moves
 * bytes. A data request pins its generation once and holds it to the end, so a refresh
 * cannot change it under the request (even one answered after loading a generation). Routes are a table (api-routes.ts); every error is an ApiError
 * carrying its own headers, answered here.
 */
export function createApiHandler(deps: ApiDeps): ApiHandler {
  const { registry, keys, limiter, clock, ids, log } = deps;
  const serveData = createDataEndpoint(registry, clock, deps.options, { rowArena: deps.rowArena ?? null, supply: deps.supply ?? null });
  const { joinInlineBytes } = deps.options;
  const joins = Number.isFinite(joinInlineBytes) ? new JoinRunner() : null;
  const serveJoin = createJoinEndpoint(registry, clock, deps.supply ?? null, { runner: joins, inlineBytes: joinInlineBytes });
  const routes = apiRoutes({ registry, keys, serveData, serveJoin, ...(deps.admin === undefined ? {} : { admin: deps.admin }) });
  const router = new Router(routes, notServedHere(registry));
  /** the catalog the router's remembered paths and the metrics' labels are of (contract 13) */
  let catalogVersion = registry.version;
  /** the metrics label of each route, found by identity (the router hands back the table's objects) */
  const endpointOf = new Map<unknown, Endpoint>(routes.map((r) => [r, endpointOfPattern(r.pattern)]));
  const metrics = deps.metrics ?? null;
  const throttle = deps.authThrottle === undefined || deps.authThrottle.limit.count === 0 ? null : deps.authThrottle;
  const trusted = TrustedProxies.parse(deps.options.trustedProxies);
  const clientAddress = (req: HttpRequest): string => {
    const c = req.client;
    if (c === undefined) return '';
    const peer = c.peer();
    return trusted.empty ? peer : trusted.clientOf(peer, c.forwardedFor());
  };

  /** What is known of a request for the access log and the metrics once it is answered. */
  const logged = (t: Trace, res: HttpResponse, format: FormatLabel, rows: number): HttpResponse => {
    const { req, keyId } = t;
    const durMs = clock.now() - t.startedMs;
    // An optional call evaluates its arguments only when there is an access log: the string is made then.
    deps.access?.({ recordId: recordIdText(res.requestId), method: req.method, path: req.path, status: res.status, keyId, bytes: res.body.length, durMs });
    metrics?.request(t.dataset, t.endpoint, format, res.status, durMs / 1000, req.method === 'HEAD' ? 0 : res.body.length, rows);
    return res;
  };

  const fail = (err: ApiError, recordId: RecordId, headers: HeaderPairs): HttpResponse => ({
    status: err.status,
    headers: joined(headers, err.headers),
    contentType: JSON_TYPE,
    requestId: recordId,
    body: renderError(err, recordIdText(recordId)),
  });

  /** An ApiError is the caller's answer; anything else is a fault: logged, and a 500 that names no internals. */
  const failure = (e: unknown, t: Trace): HttpResponse => {
    if (e instanceof ApiError) return fail(e, t.recordId, t.headers);
    log.error('request failed', { record_id: recordIdText(t.recordId), path: t.req.path, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return fail(new ApiError('internal_error', 'internal server error'), t.recordId, t.headers);
  };

  /**
   * The response of an answer given at once, and the route request: one each per handler,
   * refilled per request (near-zero allocation per request: docs/decisions.md#allocation). The transport writes
   * a synchronous response before it calls the handler again (types.ts), and route handlers
   * read their request before they return or await.
   */
  const now = blankResponse();
  const routeRequest: Mutable<RouteRequest> = { req: NO_REQUEST, recordId: '', keyIndex: -1 };
  const trace: Mutable<Trace> = { req: NO_REQUEST, recordId: '', headers: NO_HEADERS, keyId: null, startedMs: 0, dataset: '', endpoint: 'other' };

  /** A route's answer as the response (`into`: the handler's own, for an answer given at once; null: a new one), logged and counted. */
  const reply = (into: Mutable<HttpResponse> | null, t: Trace, a: RouteAnswer): HttpResponse => {
    const r = into ?? blankResponse();
    r.status = a.status;
    r.headers = joined(t.headers, a.headers);
    r.headerBlock = a.headerBlock ?? null;
    r.contentType = a.contentType;
    r.requestId = t.recordId;
    r.body = a.body;
    return logged(t, r, a.format ?? 'none', a.rows ?? 0);
  };

  const handler = (req: HttpRequest): HttpResponse | Promise<HttpResponse> => {
    const startedMs = clock.now();
    // The thread's bytes (record-id.ts): an answer that comes later takes a string of them.
    const recordId = ids.advance();
    // What the log and metrics say of it, filled as it is learnt (the handler's own: borrowed).
    const tr = trace;
    tr.req = req;
    tr.recordId = recordId;
    tr.headers = NO_HEADERS;
    tr.keyId = null;
    tr.startedMs = startedMs;
    tr.dataset = '';
    tr.endpoint = 'other';
    try {
      if (registry.version !== catalogVersion) {
        // A new catalog is in force on this thread: paths bind again, new datasets get their labels.
        catalogVersion = registry.version;
        router.forget();
        metrics?.addDatasets(registry.slots.map((s) => s.id));
      }
      const match = router.match(req.path);
      const i = match.find(req.method);
      if (i >= 0) {
        tr.endpoint = endpointOf.get(match.route(i)) ?? 'other';
        const target = match.target(i);
        if (target instanceof DatasetSlot) tr.dataset = target.id;
      }
      let keyIndex = -1;
      if (!match.public) {
        // An address that failed authentication too often is refused before its key is hashed.
        let address: string | null = null;
        if (throttle !== null && throttle.active) {
          address = clientAddress(req);
          const wait = throttle.retryAfterSeconds(address, clock.now());
          if (wait > 0) {
            metrics?.authThrottled();
            throw new ApiError('rate_limited', `too many failed authentications from this address; retry after ${wait} s`, undefined, [
              ['RateLimit-Limit', String(throttle.limit.count)],
              ['RateLimit-Remaining', '0'],
              ['RateLimit-Reset', String(wait)],
              ['Retry-After', String(wait)],
            ]);
          }
        }
        // 401 before anything about paths: an unauthenticated caller learns nothing.
        keyIndex = keys.authenticate(req.apiKey);
        if (keyIndex < 0) {
          throttle?.failed(address ?? clientAddress(req), clock.now());
          throw new ApiError('unauthorized', 'missing or invalid API key (send it in the x-api-key header)');
        }
        const keyId = keys.id(keyIndex);
        tr.keyId = keyId;
        const decision = limiter.take(keyIndex);
        if (decision.limited) {
          // RateLimit-* go on every answer to a limited key; Retry-After belongs to the 429.
          const h: Array<readonly [string, string]> = [];
          forEachRateLimitHeader(decision, (n, v) => {
            if (n !== 'Retry-After') h.push([n, v]);
          });
          tr.headers = h;
        }
        if (!decision.allowed) {
          metrics?.rateLimited(keyId);
          throw new ApiError('rate_limited', `rate limit exceeded; retry after ${decision.retryAfterSeconds} s`, undefined, [
            ['Retry-After', String(decision.retryAfterSeconds)],
          ]);
        }
      }
      if (i < 0) throw match.error(req.method);
      routeRequest.req = req;
      routeRequest.recordId = recordId;
      routeRequest.keyIndex = keyIndex;
      const answer = match.route(i).handler(routeRequest, match.target(i));
      // A closure only for an answer that comes later: most come at once.
      if (!isThenable(answer)) return reply(now, tr, answer);
      // The transport refills its request object, and the next request the id's bytes and this trace, meanwhile (ownership.ts).
      const own = ownAcrossAwait({ req, recordId, key: null, stamp: null, meta: null });
      const later: Trace = { ...tr, req: own.req, recordId: own.recordId };
      return answer.then(
        (a) => reply(null, later, a),
        (err: unknown) => logged(later, failure(err, later), 'none', 0),
      );
    } catch (e) {
      return logged(tr, failure(e, tr), 'none', 0);
    }
  };
  return Object.assign(handler, { cacheStats: serveData.cacheStats, joins, close: async () => joins?.close() });
}
