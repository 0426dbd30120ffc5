import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import type { HttpRequest } from '../src/http/types.js';
import { route, Router, type RouteAnswer } from '../src/api/router.js';

const answer = (text: string): RouteAnswer => ({ status: 200, contentType: 'text/plain', body: Buffer.from(text) });

/** Calls what the router finds for (method, path), or returns the error it would answer with. */
function call(router: Router, method: string, path: string): string | ApiError {
  const m = router.match(path);
  const i = m.find(method);
  if (i < 0) return m.error(method);
  const req: HttpRequest = { method, path, rawQuery: '', apiKey: null, accept: '', acceptEncoding: '', ifNoneMatch: '' };
  const a = m.route(i).handler({ req, recordId: 'req_x', keyIndex: 0 }, m.target(i)) as RouteAnswer;
  return Buffer.from(a.body).toString();
}

const KNOWN = new Set(['a/x', 'admin/x']);

const router = new Router([
  route({ method: 'GET', pattern: '/healthz', public: true, handler: () => answer('health') }),
  route({
    method: 'GET',
    pattern: '/{product}/{dataset}',
    bind: (p) => (KNOWN.has(`${p.product}/${p.dataset}`) ? `${p.product}:${p.dataset}` : null),
    handler: (_r, target: string) => answer(`data ${target}`),
  }),
  route({ method: 'GET', pattern: '/{product}/{dataset}/extra', bind: () => null, handler: () => answer('never') }),
  route({ method: 'GET', pattern: '/admin/status', handler: () => answer('status') }),
  route({ method: 'POST', pattern: '/admin/refresh', handler: () => answer('refresh') }),
  route({ method: 'GET', pattern: '/both', handler: () => answer('get both') }),
  route({ method: 'POST', pattern: '/both', handler: () => answer('post both') }),
]);

function expectError(r: string | ApiError, status: number, allow?: string): void {
  expect(r).toBeInstanceOf(ApiError);
  const e = r as ApiError;
  expect(e.status).toBe(status);
  expect(e.headers).toEqual(allow === undefined ? [] : [['Allow', allow]]);
}

describe('Router: the route table', () => {
  it('binds pattern parameters and calls the route of the method; HEAD finds GET', () => {
    expect(call(router, 'GET', '/a/x')).toBe('data a:x');
    expect(call(router, 'HEAD', '/a/x')).toBe('data a:x');
    expect(call(router, 'GET', '/healthz')).toBe('health');
    expect(call(router, 'POST', '/both')).toBe('post both');
    expect(call(router, 'GET', '/both')).toBe('get both');
  });

  it('prefers the pattern with more literal segments: /admin/status over /{product}/{dataset}', () => {
    expect(call(router, 'GET', '/admin/status')).toBe('status');
    // A path of the general pattern that the literal one does not name goes to the general one.
    expect(call(router, 'GET', '/admin/x')).toBe('data admin:x');
  });

  it('answers 404 for a path that names nothing, whatever the method, before 405', () => {
    for (const path of ['/', '', 'a/x', '/a', '/a/', '/a/x/', '//x', '/a/y', '/a/x/extra', '/A/x', '/healthz/', '/admin/status/x']) {
      for (const method of ['GET', 'POST', 'DELETE']) expectError(call(router, method, path), 404);
    }
  });

  it('answers 405 with Allow for a method the path does not take (GET brings HEAD)', () => {
    expectError(call(router, 'POST', '/a/x'), 405, 'GET, HEAD');
    expectError(call(router, 'DELETE', '/healthz'), 405, 'GET, HEAD');
    expectError(call(router, 'GET', '/admin/refresh'), 405, 'POST');
    expectError(call(router, 'HEAD', '/admin/refresh'), 405, 'POST');
    expectError(call(router, 'PUT', '/both'), 405, 'GET, HEAD, POST');
    expect((call(router, 'POST', '/a/x') as ApiError).message).toBe('POST is not allowed; use GET or HEAD');
  });

  it('says which paths are public (no key asked)', () => {
    expect(router.match('/healthz').public).toBe(true);
    expect(router.match('/a/x').public).toBe(false);
    expect(router.match('/nothing').public).toBe(false);
  });

  it('remembers a path that names something: the next match binds nothing and answers the same; a path naming nothing is bound each time', () => {
    const binds: string[] = [];
    const r = new Router([
      route({
        method: 'GET',
        pattern: '/{product}/{dataset}',
        bind: (p) => {
          binds.push(`${p.product}/${p.dataset}`);
          return p.product === 'a' ? { slot: p.dataset! } : null;
        },
        handler: (_r, target: { slot: string }) => answer(`data ${target.slot}`),
      }),
      route({ method: 'GET', pattern: '/healthz', public: true, handler: () => answer('health') }),
    ]);
    const first = r.match('/a/x');
    const target = first.target(first.find('GET'));
    for (let i = 0; i < 3; i++) {
      const m = r.match('/a/x');
      expect(m.find('GET')).toBe(0);
      expect(m.target(0)).toBe(target);
      expect(m.public).toBe(false);
      expect(call(r, 'GET', '/a/x')).toBe('data x');
    }
    expect(call(r, 'GET', '/a/y')).toBe('data y');
    expect(binds).toEqual(['a/x', 'a/y']);
    for (let i = 0; i < 3; i++) expect((call(r, 'GET', '/b/x') as ApiError).status).toBe(404);
    expect(binds).toEqual(['a/x', 'a/y', 'b/x', 'b/x', 'b/x']);
    // a remembered public path stays public; a remembered path still answers 405 for other methods
    expect(call(r, 'GET', '/healthz')).toBe('health');
    expect(r.match('/healthz').public).toBe(true);
    expect((call(r, 'POST', '/a/x') as ApiError).status).toBe(405);
  });

  it('keeps matching correctly past the number of paths it remembers', () => {
    let binds = 0;
    const r = new Router([
      route({
        method: 'GET',
        pattern: '/{product}/{dataset}',
        bind: (p) => {
          binds++;
          return p.dataset!;
        },
        handler: (_r, target: string) => answer(target),
      }),
    ]);
    const n = 5000;
    for (let i = 0; i < n; i++) expect(call(r, 'GET', `/p/d${i}`)).toBe(`d${i}`);
    expect(binds).toBe(n);
    for (let i = 0; i < n; i++) expect(call(r, 'GET', `/p/d${i}`)).toBe(`d${i}`);
    // the first 4096 were remembered, the rest are bound again
    expect(binds).toBe(n + (n - 4096));
  });

  it('only the most specific matching pattern decides: a less specific one never adds its routes', () => {
    const r = new Router([
      route({ method: 'POST', pattern: '/admin/refresh', handler: () => answer('refresh') }),
      route({ method: 'GET', pattern: '/{product}/{dataset}', bind: (p) => p.dataset!, handler: (_r, t: string) => answer(`data ${t}`) }),
      // same literal count, some literals shared: still other patterns
      route({ method: 'GET', pattern: '/a/{x}/c', bind: (p) => p.x!, handler: (_r, t: string) => answer(`first ${t}`) }),
      route({ method: 'POST', pattern: '/a/b/{y}', bind: (p) => p.y!, handler: (_r, t: string) => answer(`second ${t}`) }),
    ]);
    expectError(call(r, 'GET', '/admin/refresh'), 405, 'POST');
    expect(call(r, 'POST', '/admin/refresh')).toBe('refresh');
    expect(call(r, 'GET', '/a/b/c')).toBe('first b');
    expectError(call(r, 'POST', '/a/b/c'), 405, 'GET, HEAD');
    expect(call(r, 'POST', '/a/b/d')).toBe('second d');
  });

  it('never binds an empty segment or a path that does not start with /', () => {
    const seen: string[] = [];
    const r = new Router([
      route({
        method: 'GET',
        pattern: '/{product}/{dataset}',
        bind: (p) => {
          seen.push(`${p.product}|${p.dataset}`);
          return 'slot';
        },
        handler: () => answer('data'),
      }),
    ]);
    for (const path of ['/a/', '//x', '*a/x', 'xa/x', '']) expectError(call(r, 'GET', path), 404);
    expect(seen).toEqual([]);
  });

  it('refuses a pattern that is not a path', () => {
    expect(() => new Router([route({ method: 'GET', pattern: 'healthz', handler: () => answer('') })])).toThrow(/start with/);
  });
});
