/**
 * Contract 13: GET /openapi.json describes the catalog in force, one path per dataset and
 * endpoint with that product's filters as parameters, and follows a catalog change within
 * one refresh interval without a restart (its ETag changes with it). The document of any
 * valid catalog (the built-in one, an invented one) passes `redocly lint`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_CATALOG } from '../src/catalog/builtin.js';
import { catalogFromJson } from '../src/catalog/catalog-document.js';
import { filterParameter, openapiDocument } from '../src/openapi/catalog-openapi.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { ADMIN_KEY, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;

/** An invented catalog: a product without filters or floor, one with two filters (one closed) and two datasets. */
const INVENTED = {
  format: 'pitcache-catalog/1',
  products: [
    { id: 'flat', name: 'Flat Index', floor: null, filters: [], datasets: [{ name: 'level', description: 'one series, no key' }] },
    {
      id: 'grid2',
      name: 'Two-Key Grid',
      floor: '2026-02-01',
      filters: [
        { param: 'site', allowed: null },
        { param: 'band', allowed: ['low', 'mid.1', 'high'] },
      ],
      datasets: [
        { name: 'load', description: 'load by site and band' },
        { name: 'spread', description: '' },
      ],
    },
  ],
};

type Doc = {
  paths: Record<string, Record<string, { operationId: string; parameters?: Array<{ name?: string; $ref?: string; schema?: { pattern?: string } }> }>>;
};

const ENDPOINTS: ReadonlyArray<readonly [string, string]> = [
  ['', 'get'],
  ['/walk_forward', 'get'],
  ['/vintages', 'get'],
  ['/asof_join', 'post'],
];
const OPS = ['/catalog', '/openapi.json', '/healthz', '/readyz', '/metrics', '/admin/status', '/admin/refresh'];

function pathsOf(datasets: string[]): string[] {
  return [...datasets.flatMap((d) => ENDPOINTS.map(([suffix]) => `/${d}${suffix}`)), ...OPS];
}

const paramNames = (doc: Doc, path: string, method: string): string[] =>
  (doc.paths[path]![method]!.parameters ?? []).map((p) => p.name ?? p.$ref!.split('/').pop()!);

describe('the OpenAPI document of a catalog', () => {
  it('has one path per dataset and endpoint, in catalog order, and no template path', () => {
    const doc = openapiDocument(catalogFromJson(INVENTED)) as Doc;
    expect(Object.keys(doc.paths)).toEqual(pathsOf(['flat/level', 'grid2/load', 'grid2/spread']));
    const builtin = openapiDocument(BUILTIN_CATALOG) as Doc;
    expect(Object.keys(builtin.paths)).toEqual(pathsOf(BUILTIN_CATALOG.ids()));
    expect(Object.keys(doc.paths).filter((p) => p.includes('{'))).toEqual([]);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method] of Object.entries(item))
        expect(paramNames(doc, path, method).filter((n) => n === 'Product' || n === 'Dataset' || n === 'Filter')).toEqual([]);
    }
  });

  it("gives each GET endpoint its product's filters as query parameters, and asof_join none (its events carry the key)", () => {
    const doc = openapiDocument(catalogFromJson(INVENTED)) as Doc;
    for (const [suffix, method] of ENDPOINTS) {
      const flat = paramNames(doc, `/flat/level${suffix}`, method);
      const grid = paramNames(doc, `/grid2/spread${suffix}`, method);
      expect(flat.filter((n) => n === 'site' || n === 'band')).toEqual([]);
      expect(grid.filter((n) => n === 'site' || n === 'band')).toEqual(method === 'get' ? ['site', 'band'] : []);
      // the rest of the endpoint's parameters are the template's, in its order
      expect(grid.filter((n) => n !== 'site' && n !== 'band')).toEqual(flat);
    }
    expect(paramNames(doc, '/grid2/load/walk_forward', 'get')).toContain('DecisionFrom');
    expect(paramNames(doc, '/grid2/load/asof_join', 'post')).toContain('MaxAge');
  });

  it('a closed filter is a pattern of its values and lists of them; an open one any non-empty text', () => {
    const band = filterParameter({ param: 'band', allowed: ['low', 'mid.1', 'high'] }, 'grid2') as { schema: { pattern: string }; description: string };
    const re = new RegExp(band.schema.pattern);
    for (const ok of ['low', 'mid.1', 'low,high', 'high,mid.1,low']) expect(re.test(ok), ok).toBe(true);
    for (const bad of ['', 'mid', 'midx1', 'low,', ',low', 'low,other', 'LOW']) expect(re.test(bad), bad).toBe(false);
    expect(band.description).toContain('one of low, mid.1, high');
    expect(filterParameter({ param: 'site', allowed: null }, 'grid2')).toMatchObject({
      name: 'site',
      in: 'query',
      required: false,
      schema: { type: 'string', minLength: 1 },
    });
  });

  it('names each operation uniquely, even where ids joined by _ would collide', () => {
    const tricky = catalogFromJson({
      format: 'pitcache-catalog/1',
      products: [
        { id: 'a_b', name: 'A', floor: null, datasets: [{ name: 'c' }] },
        { id: 'a', name: 'B', floor: null, datasets: [{ name: 'b_c' }] },
      ],
    });
    const doc = openapiDocument(tricky) as Doc;
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  describe('redocly lint', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'pitcache-openapi-'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it.each([
      ['the built-in catalog', BUILTIN_CATALOG],
      ['an invented catalog', catalogFromJson(INVENTED)],
      ['an empty catalog', catalogFromJson({ format: 'pitcache-catalog/1', products: [] })],
    ])(
      'passes for %s, with no warning',
      async (name, catalog) => {
        const file = join(dir, `${name.replace(/\W+/g, '-')}.json`);
        await writeFile(file, JSON.stringify(openapiDocument(catalog), null, 2));
        const r = await run('npx', ['redocly', 'lint', '--config', 'redocly.yaml', file], { cwd: ROOT }).catch(
          (e: { stdout: string; stderr: string; code: number }) => e,
        );
        const out = `${r.stdout}\n${r.stderr}`;
        expect('code' in r ? r.code : 0, out).toBe(0);
        expect(out).toContain('Your API description is valid');
        expect(out).not.toMatch(/Warning was generated|You have \d+ warning/);
      },
      60_000,
    );
  });
});

describe('GET /openapi.json follows the catalog in force', () => {
  const INTERVAL = 60_000;
  const clock = new ManualClock(Date.UTC(2026, 10, 20, 12, 0, 0));
  const timers = new ManualTimers(clock);
  const rows: PitRow[] = [{ key: { site: 'n', band: 'low' }, date: '2026-03-02', eff: '2026-03-02', obs: '2026-03-02T06:00:00Z', tag: 'a', value: 1 }];
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      datasets: [{ productId: 'grid2', dataset: 'load', spec: pitSnapshot(['site', 'band'], rows) }],
      prepare: async (d) => writeFile(join(d, 'catalog.json'), JSON.stringify(INVENTED)),
      server: { clock, timers, refreshIntervalMs: INTERVAL },
    });
  });
  afterAll(() => h?.close());

  async function fetchDoc(etag?: string): Promise<{ status: number; etag: string | null; doc: Doc | null }> {
    const r = await h.get('/openapi.json', null, etag === undefined ? {} : { headers: { 'if-none-match': etag } });
    return { status: r.status, etag: r.headers.get('etag'), doc: r.status === 200 ? (r.body as Doc) : null };
  }

  it('is the document of the source catalog, with a strong ETag; If-None-Match with it answers 304', async () => {
    const first = await fetchDoc();
    expect(first.status).toBe(200);
    expect(first.doc).toEqual(JSON.parse(JSON.stringify(openapiDocument(catalogFromJson(INVENTED)))));
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect((await fetchDoc()).etag).toBe(first.etag);
    const again = await fetchDoc(first.etag!);
    expect(again.status).toBe(304);
    expect(again.etag).toBe(first.etag);
    expect((await fetchDoc('"other"')).status).toBe(200);
  });

  it('changes within one refresh interval of a catalog change, without a restart, and so does its ETag', async () => {
    const before = await fetchDoc();
    const next = structuredClone(INVENTED);
    next.products[1]!.filters = [{ param: 'site', allowed: ['n', 's'] }];
    next.products[1]!.datasets.push({ name: 'fresh', description: 'added later' });
    next.products.shift();
    await writeFile(join(h.dir, 'catalog.json'), JSON.stringify(next));
    // Not before the refresh check: the catalog in force is still the first.
    expect((await fetchDoc(before.etag!)).status).toBe(304);
    const checked = (await h.get('/admin/status', ADMIN_KEY)).body.catalog.last_check;
    timers.advance(INTERVAL);
    let after = await fetchDoc(before.etag!);
    for (let i = 0; i < 400 && after.status === 304; i++) {
      await new Promise((r) => setTimeout(r, 25));
      after = await fetchDoc(before.etag!);
    }
    expect((await h.get('/admin/status', ADMIN_KEY)).body.catalog.last_check).not.toBe(checked);
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(before.etag);
    expect(Object.keys(after.doc!.paths)).toEqual(pathsOf(['grid2/load', 'grid2/spread', 'grid2/fresh']));
    const site = after.doc!.paths['/grid2/load']!.get!.parameters!.find((p) => p.name === 'site');
    expect(site?.schema?.pattern).toBe('^(?:n|s)(?:,(?:n|s))*$');
    expect(after.doc!.paths['/grid2/load']!.get!.parameters!.find((p) => p.name === 'band')).toBeUndefined();
  });
});
