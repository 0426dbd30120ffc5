import type { KeyRegistry } from '../auth/key-registry.js';
import { ApiError } from '../errors.js';
import { recordIdText } from '../http/record-id.js';
import { exploreRoutes } from './explore-routes.js';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics/aggregate.js';
import type { AdminOps } from './admin.js';
import { catalogBody } from './catalog-listing.js';
import type { DataEndpoint } from '../pipeline/data-answer.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { JoinEndpoint } from '../pipeline/join-endpoint.js';
import { servedDocument, type ServedDocument } from '../openapi/catalog-openapi.js';
import { ifNoneMatchHits } from '../format/etag.js';
import { healthBody, readinessBody } from './readiness.js';
import { route, type AnyRoute, type RouteAnswer } from './router.js';

const JSON_TYPE = 'application/json';

const EMPTY = new Uint8Array(0);

export interface RouteDeps {
  readonly registry: DatasetRegistry;
  readonly keys: KeyRegistry;
  readonly serveData: DataEndpoint;
  /** `POST .../asof_join` (contract 15) */
  readonly serveJoin: JoinEndpoint;
  /** the operational endpoints; absent = not routed (their paths answer 404) */
  readonly admin?: AdminOps;
}

/**
 * Every endpoint of the API port, as a table (router.ts says how a route is matched).
 * Order of answers for a keyed route: 401, 429, 404 (path names nothing), 405 (with
 * Allow), then the handler (403 for a key not entitled, then the answer).
 */
export function apiRoutes(deps: RouteDeps): AnyRoute[] {
  const { registry, keys, serveData, serveJoin, admin } = deps;

  /** `{product}/{dataset}` -> its slot, or null (404) for a product or dataset the catalog in force does not name (spec 2.2, contract 13). */
  const slotOf = (p: Readonly<Record<string, string>>): DatasetSlot | null => registry.get(p.product!, p.dataset!) ?? null;

  const json = (body: Uint8Array, status = 200): RouteAnswer => ({ status, contentType: JSON_TYPE, body });

  /** The OpenAPI document of the catalog in force (contract 13), made again when a new catalog is applied on this thread. */
  let openapi: ServedDocument | null = null;
  const openapiAnswer = (ifNoneMatch: string): RouteAnswer => {
    if (openapi?.catalog !== registry.catalog) openapi = servedDocument(registry.catalog);
    const headers: ReadonlyArray<readonly [string, string]> = [['ETag', openapi.etag]];
    if (ifNoneMatchHits(ifNoneMatch, openapi.etag)) return { status: 304, contentType: JSON_TYPE, body: EMPTY, headers };
    return { status: 200, contentType: JSON_TYPE, body: openapi.body, headers };
  };

  const routes: AnyRoute[] = [
    route({ method: 'GET', pattern: '/healthz', public: true, handler: () => json(healthBody()) }),
    route({ method: 'GET', pattern: '/readyz', public: true, handler: () => json(readinessBody(registry), registry.readyForTraffic ? 200 : 503) }),
    route({ method: 'GET', pattern: '/openapi.json', public: true, handler: ({ req }) => openapiAnswer(req.ifNoneMatch) }),
    ...exploreRoutes(),
    // Any valid key; each sees the datasets it may read (contract 13). JSON whatever Accept says.
    route({ method: 'GET', pattern: '/catalog', handler: ({ keyIndex }) => json(catalogBody(registry, keys, keyIndex)) }),
    route({
      method: 'GET',
      pattern: '/{product}/{dataset}',
      bind: slotOf,
      handler: ({ req, recordId, keyIndex }, slot) => {
        if (!keys.entitled(keyIndex, slot.product.id)) throw new ApiError('forbidden', `this key is not entitled to ${slot.product.id}`);
        // A DataAnswer is a RouteAnswer (plus rows and format for metrics).
        return serveData(slot, req, recordId);
      },
    }),
    route({
      method: 'GET',
      pattern: '/{product}/{dataset}/walk_forward',
      bind: slotOf,
      handler: ({ req, recordId, keyIndex }, slot) => {
        if (!keys.entitled(keyIndex, slot.product.id)) throw new ApiError('forbidden', `this key is not entitled to ${slot.product.id}`);
        return serveData(slot, req, recordId, 'walk_forward');
      },
    }),
    route({
      method: 'POST',
      pattern: '/{product}/{dataset}/asof_join',
      bind: slotOf,
      handler: ({ req, recordId, keyIndex }, slot) => {
        if (!keys.entitled(keyIndex, slot.product.id)) throw new ApiError('forbidden', `this key is not entitled to ${slot.product.id}`);
        return serveJoin(slot, req, recordIdText(recordId));
      },
    }),
    route({
      method: 'GET',
      pattern: '/{product}/{dataset}/vintages',
      bind: slotOf,
      handler: ({ req, recordId, keyIndex }, slot) => {
        if (!keys.entitled(keyIndex, slot.product.id)) throw new ApiError('forbidden', `this key is not entitled to ${slot.product.id}`);
        return serveData(slot, req, recordId, 'vintages');
      },
    }),
  ];

  if (admin !== undefined) {
    /** Operational endpoints: admin keys only (contract 7); 404 and 405 come first, like any path. */
    const adminOnly = (keyIndex: number): void => {
      if (!keys.isAdmin(keyIndex)) throw new ApiError('forbidden', 'this key may not call operational endpoints');
    };
    routes.push(
      route({
        method: 'GET',
        pattern: '/admin/status',
        handler: ({ keyIndex }) => {
          adminOnly(keyIndex);
          return admin.status().then((body) => json(body));
        },
      }),
      route({
        method: 'POST',
        pattern: '/admin/refresh',
        handler: ({ keyIndex }) => {
          adminOnly(keyIndex);
          return admin.refresh().then((body) => json(body));
        },
      }),
      // Also without a key on --metrics-port (metrics-server.ts), for in-cluster scrapers.
      route({
        method: 'GET',
        pattern: '/metrics',
        handler: ({ keyIndex }) => {
          adminOnly(keyIndex);
          return admin.metrics().then((body) => ({ status: 200, contentType: PROMETHEUS_CONTENT_TYPE, body }));
        },
      }),
    );
  }
  return routes;
}
