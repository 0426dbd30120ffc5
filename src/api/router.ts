import { ApiError, methodNotAllowed, type HeaderPairs } from '../errors.js';
import type { Format } from '../format/negotiate.js';
import type { HeaderBlock } from '../http/header-block.js';
import type { RecordId } from '../http/record-id.js';
import type { HttpRequest } from '../http/types.js';

/** Methods a route answers; a GET route answers HEAD too (the transport drops the body). */
export type Method = 'GET' | 'POST';

/** What a route's handler answers with besides the request id and the per-request headers. */
export interface RouteAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** headers of this answer (x-count, ETag...), after the per-request ones (RateLimit-*) */
  readonly headers?: HeaderPairs;
  /** headers written as bytes, after `headers` (data answers: header-block.ts) */
  readonly headerBlock?: HeaderBlock;
  /** data answers: rows sent and the format written (metrics) */
  readonly rows?: number;
  readonly format?: Format;
}

export interface RouteRequest {
  readonly req: HttpRequest;
  /** valid like `req` (record-id.ts) */
  readonly recordId: RecordId;
  /** the caller's key (KeyRegistry index); -1 on public routes, which ask for none */
  readonly keyIndex: number;
}

/**
 * One route: `{method, pattern, handler}`. A pattern is a path of literal segments and
 * `{name}` parameters, each one whole non-empty segment: `/healthz`,
 * `/{product}/{dataset}`, `/{product}/{dataset}/walk_forward`. Where two patterns match a
 * path, the one with more literal segments wins (`/admin/status` over
 * `/{product}/{dataset}`).
 *
 * `bind` turns the parameters into what the handler serves (a dataset slot); null means
 * the path names nothing: 404, decided before the method is looked at, so an unknown
 * path is a 404 whatever the method. It must be a pure function of the parameters until
 * `forget` is called: the router remembers what a path bound to. `public` routes (health, readiness) ask for no key;
 * every other path answers 401 before anything about it is revealed (contract 5).
 *
 * To add an endpoint (e.g. `GET /openapi.json` or `/metrics` on the API port), register a
 * route here: `{ method: 'GET', pattern: '/openapi.json', public: true, handler }`.
 */
export interface Route<T = void> {
  readonly method: Method;
  readonly pattern: string;
  readonly public?: boolean;
  readonly bind?: (params: Readonly<Record<string, string>>) => T | null;
  readonly handler: (r: RouteRequest, target: T) => RouteAnswer | Promise<RouteAnswer>;
}

/** A route with its target type erased, for the table. */
export type AnyRoute = Route<never>;

/** Type-checks a route against its own target type, then erases it for the table. */
export function route<T>(r: Route<T>): AnyRoute {
  return r as unknown as AnyRoute;
}

interface Compiled {
  readonly route: Route<unknown>;
  /** per segment: the literal, or null for a parameter */
  readonly literals: ReadonlyArray<string | null>;
  readonly names: ReadonlyArray<string | null>;
}

/**
 * The routes a path names, bound: what the API handler needs to answer 401, 404, 405 or
 * call. Reused by the next `match` (the handler reads it before matching again).
 */
export class Match {
  /** true when the path is a public route's (no key asked) */
  public = false;
  private readonly routes: Array<Route<unknown>> = [];
  private readonly targets: unknown[] = [];
  private count = 0;
  private path = '';

  constructor(private readonly notFound: NotFound) {}

  reset(path: string): void {
    this.public = false;
    this.count = 0;
    this.path = path;
  }

  add(route: Route<unknown>, target: unknown): void {
    this.routes[this.count] = route;
    this.targets[this.count] = target;
    this.count++;
    if (route.public === true) this.public = true;
  }

  /** routes matched */
  get size(): number {
    return this.count;
  }

  /** A copy of what was matched, to remember. */
  bound(): Bound {
    return { routes: this.routes.slice(0, this.count), targets: this.targets.slice(0, this.count) };
  }

  /** The index of the route for `method` (HEAD finds GET), or -1. */
  find(method: string): number {
    for (let i = 0; i < this.count; i++) {
      const m = this.routes[i]!.method;
      if (m === method || (method === 'HEAD' && m === 'GET')) return i;
    }
    return -1;
  }

  route(i: number): Route<unknown> {
    return this.routes[i]!;
  }

  target(i: number): unknown {
    return this.targets[i];
  }

  /** 404 when the path names nothing, 405 (with Allow) when the method is not among its routes'. */
  error(method: string): ApiError {
    if (this.count === 0) return this.notFound(this.path) ?? new ApiError('not_found', 'no such product or dataset');
    return methodNotAllowed(method, allowOf(this.routes.slice(0, this.count).map((r) => r.method)));
  }
}

/** A more telling 404 for a path that names nothing here (a dataset another shard serves), or null for the plain one. */
export type NotFound = (path: string) => ApiError | null;

/** What a path that names something matched: the routes and their targets, in order. */
interface Bound {
  readonly routes: ReadonlyArray<Route<unknown>>;
  readonly targets: readonly unknown[];
}

/**
 * Paths remembered at most. Only paths that name something are kept (a finite set: the
 * patterns times the datasets), so random paths cannot grow it; the bound covers spellings
 * the binder also accepts.
 */
const BOUND_PATHS_MAX = 4096;

/**
 * The route table: matches a path to its routes and binds their parameters. One per API
 * handler. A path that names something is matched once and remembered: the next request
 * for it splits nothing and binds nothing (a data request allocates near nothing: docs/decisions.md#allocation).
 */
export class Router {
  private readonly compiled: Compiled[];
  private readonly current: Match;
  private readonly bound = new Map<string, Bound>();

  constructor(routes: readonly AnyRoute[], notFound: NotFound = () => null) {
    this.current = new Match(notFound);
    this.compiled = routes.map((r) => compile(r as unknown as Route<unknown>));
    // More literal segments first: the most specific pattern wins; ties keep table order.
    this.compiled.sort((a, b) => literalCount(b) - literalCount(a));
  }

  /** What paths bound to is stale (a new catalog, contract 13): bind every path again. */
  forget(): void {
    this.bound.clear();
  }

  /** The routes of `path` (a URL path, not decoded); valid until the next call. */
  match(path: string): Match {
    const m = this.current;
    m.reset(path);
    if (path.charCodeAt(0) !== 0x2f) return m;
    const known = this.bound.get(path);
    if (known !== undefined) {
      for (let i = 0; i < known.routes.length; i++) m.add(known.routes[i]!, known.targets[i]);
      return m;
    }
    const segments = path.slice(1).split('/');
    let pattern: Compiled | null = null;
    for (const c of this.compiled) {
      // Only the first (most specific) matching pattern decides; routes of one pattern share it.
      if (pattern !== null && !samePattern(c, pattern)) continue;
      const params = matchSegments(c, segments);
      if (params === null) continue;
      pattern = c;
      const target = c.route.bind === undefined ? undefined : c.route.bind(params);
      if (target !== null) m.add(c.route, target);
    }
    if (m.size > 0 && this.bound.size < BOUND_PATHS_MAX) this.bound.set(path, m.bound());
    return m;
  }
}

function compile(route: Route<unknown>): Compiled {
  if (!route.pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${route.pattern}`);
  const parts = route.pattern.slice(1).split('/');
  return {
    route,
    literals: parts.map((p) => (p.startsWith('{') && p.endsWith('}') ? null : p)),
    names: parts.map((p) => (p.startsWith('{') && p.endsWith('}') ? p.slice(1, -1) : null)),
  };
}

function literalCount(c: Compiled): number {
  return c.literals.reduce((n, l) => n + (l === null ? 0 : 1), 0);
}

function samePattern(a: Compiled, b: Compiled): boolean {
  return a === b || (a.literals.length === b.literals.length && a.literals.every((x, i) => x === b.literals[i]));
}

function matchSegments(c: Compiled, segments: readonly string[]): Record<string, string> | null {
  if (segments.length !== c.literals.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const literal = c.literals[i];
    const s = segments[i]!;
    if (literal === null) {
      if (s === '') return null;
      params[c.names[i]!] = s;
    } else if (literal !== s) {
      return null;
    }
  }
  return params;
}

/** `GET, HEAD`, `POST`, `GET, HEAD, POST`: GET brings HEAD. */
function allowOf(methods: readonly Method[]): string {
  const out: string[] = [];
  for (const m of ['GET', 'POST'] as const) {
    if (!methods.includes(m)) continue;
    out.push(m);
    if (m === 'GET') out.push('HEAD');
  }
  return out.join(', ');
}
