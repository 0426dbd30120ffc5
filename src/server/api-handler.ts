import type { KeyRegistry } from '../auth/key-registry.js';
import { forEachRateLimitHeader, type RateLimiter } from '../auth/rate-limiter.js';
import { findProduct } from '../catalog/products.js';
import { ApiError } from '../errors.js';
import type { HttpRequest, HttpResponse, Handler } from '../http/types.js';
import type { AccessRecord } from '../log/access-log.js';
import type { Logger } from '../log/logger.js';
import { renderError } from '../render/error-body.js';
import type { Clock } from '../time/clock.js';
import type { AdminOps } from './admin.js';
import { createDataEndpoint, type DataAnswer } from './data-endpoint.js';
import type { DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { RequestIds } from './request-ids.js';
import { healthBody, readinessBody } from './readiness.js';

export interface ApiDeps {
  readonly registry: DatasetRegistry;
  readonly keys: KeyRegistry;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly ids: RequestIds;
  readonly log: Logger;
  /** the operational endpoints; absent = they answer 404 */
  readonly admin?: AdminOps;
  /** bytes of rendered bodies kept for repeated queries; 0 or absent = no cache */
  readonly responseCacheBytes?: number;
  /** bytes of rendered rows kept for overlapping queries (walk-forward steps); 0 or absent = no cache */
  readonly rowCacheBytes?: number;
  /** one record per answered request; absent = no access log */
  readonly access?: (r: AccessRecord) => void;
}

type Headers = Array<readonly [string, string]>;
const JSON_TYPE = 'application/json';
const ALLOW: readonly [string, string] = ['Allow', 'GET, HEAD'];
const NO_HEADERS: Headers = [];

/**
 * The whole API as a plain function of a request: parse -> resolve -> render. No socket
 * here; the uWS layer only moves bytes. Data requests are answered synchronously, so the
 * generation a request reads cannot change under it.
 */
export function createApiHandler(deps: ApiDeps): Handler {
  const { registry, keys, limiter, clock, ids, log } = deps;
  const serveData = createDataEndpoint(registry, clock, { responseCacheBytes: deps.responseCacheBytes ?? 0, rowCacheBytes: deps.rowCacheBytes ?? 0 });

  const answer = (req: HttpRequest, res: HttpResponse, keyId: string | null, startedMs: number): HttpResponse => {
    deps.access?.({ recordId: res.requestId, method: req.method, path: req.path, status: res.status, keyId, bytes: res.body.length, durMs: clock.now() - startedMs });
    return res;
  };

  const fail = (err: ApiError, recordId: string, headers: Headers): HttpResponse => ({
    status: err.status,
    headers,
    contentType: JSON_TYPE,
    requestId: recordId,
    body: renderError(err, recordId),
  });

  return (req) => {
    const startedMs = clock.now();
    const recordId = ids.next();
    let headers: Headers = NO_HEADERS;
    let keyId: string | null = null;
    try {
      if (req.path === '/healthz' || req.path === '/readyz') {
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError('method_not_allowed', `${req.method} is not allowed; use GET or HEAD`);
        const ready = req.path === '/healthz' || registry.ready;
        const body = req.path === '/healthz' ? healthBody() : readinessBody(registry);
        return answer(req, { status: ready ? 200 : 503, headers, contentType: JSON_TYPE, requestId: recordId, body }, null, startedMs);
      }

      // 401 before anything about paths: an unauthenticated caller learns nothing.
      const keyIndex = keys.authenticate(req.apiKey);
      if (keyIndex < 0) throw new ApiError('unauthorized', 'missing or invalid API key (send it in the x-api-key header)');
      keyId = keys.id(keyIndex);

      const decision = limiter.take(keyIndex);
      if (decision.limited) {
        const h: Headers = [];
        forEachRateLimitHeader(decision, (n, v) => h.push([n, v]));
        headers = h;
      }
      if (!decision.allowed) throw new ApiError('rate_limited', `rate limit exceeded; retry after ${decision.retryAfterSeconds} s`);

      if (req.path.startsWith('/admin/')) return adminRequest(req, keyIndex, recordId, headers, keyId, startedMs);

      const slot = route(req.path);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        headers = [...headers, ALLOW];
        throw new ApiError('method_not_allowed', `${req.method} is not allowed; use GET or HEAD`);
      }
      if (!keys.entitled(keyIndex, slot.product.id)) throw new ApiError('forbidden', `this key is not entitled to ${slot.product.id}`);

      const data = serveData(slot, req, recordId);
      const respond = (d: DataAnswer): HttpResponse =>
        answer(req, { status: d.status, headers: headers.length === 0 ? d.headers : [...headers, ...d.headers], contentType: d.contentType, requestId: recordId, body: d.body }, keyId, startedMs);
      if (!(data instanceof Promise)) return respond(data);
      return data.then(respond, (e: unknown) => {
        log.error('request failed', { record_id: recordId, path: req.path, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
        return answer(req, fail(new ApiError('internal_error', 'internal server error'), recordId, headers), keyId, startedMs);
      });
    } catch (e) {
      if (e instanceof ApiError) return answer(req, fail(e, recordId, headers), keyId, startedMs);
      log.error('request failed', { record_id: recordId, path: req.path, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
      return answer(req, fail(new ApiError('internal_error', 'internal server error'), recordId, headers), keyId, startedMs);
    }
  };

  /** /admin/status (GET) and /admin/refresh (POST): admin keys only (contract 7). */
  function adminRequest(req: HttpRequest, keyIndex: number, recordId: string, headers: Headers, keyId: string, startedMs: number): HttpResponse | Promise<HttpResponse> {
    const admin = deps.admin;
    const method = req.path === '/admin/status' ? 'GET' : req.path === '/admin/refresh' ? 'POST' : null;
    if (admin === undefined || method === null) throw new ApiError('not_found', 'no such product or dataset');
    if (req.method !== method && !(method === 'GET' && req.method === 'HEAD')) {
      // Answered here, not thrown: the caller's catch would answer with its own headers, without Allow.
      const allow: Headers = [...headers, ['Allow', method === 'GET' ? 'GET, HEAD' : 'POST']];
      return answer(req, fail(new ApiError('method_not_allowed', `${req.method} is not allowed; use ${method}`), recordId, allow), keyId, startedMs);
    }
    if (!keys.isAdmin(keyIndex)) throw new ApiError('forbidden', 'this key may not call operational endpoints');
    const ok = (body: Uint8Array): HttpResponse => answer(req, { status: 200, headers, contentType: JSON_TYPE, requestId: recordId, body }, keyId, startedMs);
    return (method === 'GET' ? admin.status() : admin.refresh()).then(ok, (e: unknown) => {
      log.error('admin request failed', { record_id: recordId, path: req.path, error: String(e) });
      return answer(req, fail(new ApiError('internal_error', 'internal server error'), recordId, headers), keyId, startedMs);
    });
  }

  function route(path: string): DatasetSlot {
    const parts = path.split('/');
    if (parts.length === 3 && parts[0] === '') {
      const product = findProduct(parts[1]!);
      const slot = product === undefined ? undefined : registry.get(product.id, parts[2]!);
      if (slot !== undefined) return slot;
    }
    throw new ApiError('not_found', 'no such product or dataset');
  }
}
