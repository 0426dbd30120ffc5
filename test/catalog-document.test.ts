/**
 * catalog.json (contract 13) at the boundary: what a valid document becomes, and the one
 * line each refusal says (which product, dataset, filter or field, and why). Also the
 * Catalog's lookups, what counts as a serving change, and that every query parameter of
 * every endpoint is reserved against filters.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_CATALOG } from '../src/catalog/builtin.js';
import { Catalog, floorUsOf, sameServing, type ProductSpec } from '../src/catalog/catalog.js';
import {
  CATALOG_FORMAT,
  RESERVED_PARAMS,
  ROUTE_WORDS,
  catalogBytes,
  catalogDocument,
  catalogFromJson,
  parseCatalogDocument,
} from '../src/catalog/catalog-document.js';
import { catalogInForce, readCatalog, writeCatalog, CatalogConflictError } from '../src/catalog/catalog-source.js';
import { allNamedDatasets, findProduct, isNamedDataset, PRODUCTS } from '../src/catalog/products.js';
import type { WriteCondition, WriteResult } from '../src/source/snapshot-source.js';
import { OpsError } from '../src/ops-errors.js';
import { LocalSource } from '../src/source/local-source.js';
import { parseQuery } from '../src/query/parse-query.js';
import { parseWalkForward } from '../src/query/parse-walk-forward.js';
import { parseVintages } from '../src/query/parse-vintages.js';
import { ApiError } from '../src/errors.js';
import { parseJoinQuery } from '../src/join/parse-join-query.js';

const product = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: 'acme',
  name: 'Acme',
  floor: '2026-02-01',
  filters: [{ param: 'site', allowed: null }],
  datasets: [{ name: 'sites', description: 'per site' }],
  ...over,
});
const doc = (...products: unknown[]): object => ({ format: CATALOG_FORMAT, products });

function refusal(json: unknown): string {
  try {
    catalogFromJson(json);
  } catch (e) {
    expect(e).toBeInstanceOf(OpsError);
    expect((e as OpsError).code).toBe('catalog_invalid');
    return (e as Error).message;
  }
  throw new Error('accepted');
}

describe('catalog.json: a valid document', () => {
  it('becomes a Catalog: defaults for description and filters, every field kept, entries in order', () => {
    const c = catalogFromJson(doc(product(), { id: 'solo', name: 'Solo', floor: null, datasets: [{ name: 'one' }, { name: 'two', description: 'second' }] }));
    expect(c.products).toEqual([
      { id: 'acme', name: 'Acme', floor: '2026-02-01', filters: [{ param: 'site', allowed: null }], datasets: [{ name: 'sites', description: 'per site' }] },
      {
        id: 'solo',
        name: 'Solo',
        floor: null,
        filters: [],
        datasets: [
          { name: 'one', description: '' },
          { name: 'two', description: 'second' },
        ],
      },
    ]);
    expect(c.ids()).toEqual(['acme/sites', 'solo/one', 'solo/two']);
    expect(c.entries.map((e) => [e.id, e.product.id, e.dataset.name])).toEqual([
      ['acme/sites', 'acme', 'sites'],
      ['solo/one', 'solo', 'one'],
      ['solo/two', 'solo', 'two'],
    ]);
    expect(c.product('solo')?.name).toBe('Solo');
    expect(c.product('nope')).toBeUndefined();
    expect(c.entry('solo', 'two')?.dataset.description).toBe('second');
    expect(c.entry('solo', 'sites')).toBeUndefined();
    expect(c.has('acme', 'sites')).toBe(true);
    expect(c.has('acme', 'one')).toBe(false);
  });

  it('round-trips through catalog.json bytes (what --set writes and --builtin prints)', () => {
    for (const c of [BUILTIN_CATALOG, catalogFromJson(doc(product({ filters: [{ param: 'band', allowed: ['a', 'b'] }] })))]) {
      const bytes = catalogBytes(c);
      const text = Buffer.from(bytes).toString('utf8');
      expect(text.endsWith('}\n')).toBe(true);
      expect(text).toContain('\n  "format": "pitcache-catalog/1"');
      expect(JSON.parse(text)).toEqual(catalogDocument(c));
      expect(parseCatalogDocument(bytes).products).toEqual(c.products);
    }
  });

  it('reads bytes at an offset of a larger buffer', () => {
    const text = new TextEncoder().encode(`xx${JSON.stringify(doc(product()))}yy`);
    expect(parseCatalogDocument(text.subarray(2, text.length - 2)).ids()).toEqual(['acme/sites']);
  });

  it('accepts ids at their longest and with digits and _', () => {
    const id = 'a' + 'b_9'.repeat(10) + 'z';
    const name = 'd' + '0'.repeat(63);
    expect(id.length).toBe(32);
    expect(catalogFromJson(doc(product({ id, datasets: [{ name }], filters: [{ param: 'p' + 'q'.repeat(63), allowed: null }] }))).ids()).toEqual([
      `${id}/${name}`,
    ]);
  });
});

describe('catalog.json: each refusal names what and why', () => {
  const P = 'catalog.json is invalid: ';
  it.each([
    ['not JSON', new TextEncoder().encode('{"format":'), /^catalog\.json is invalid: not JSON: /],
    ['a wrong format', { format: 'pitcache-catalog/2', products: [] }, `${P}field format: format must be "pitcache-catalog/1"`],
    ['no products', { format: CATALOG_FORMAT }, `${P}field products: Required`],
    ['an unknown top-level field', { ...(doc() as object), extra: 1 }, `${P}the document: unknown field extra`],
    ['two unknown fields of a product', doc(product({ x: 1, y: 2 })), `${P}product "acme" (products[0]): unknown fields x, y`],
    ['a product without name', doc(product({ name: undefined })), `${P}product "acme" (products[0]), field name: Required`],
    ['an empty name', doc(product({ name: '' })), `${P}product "acme" (products[0]), field name: name is empty`],
    ['a product that is not an object', doc(5), `${P}product products[0]: Expected object, received number`],
    ['a product that is null', doc(null), `${P}product products[0]: Expected object, received null`],
    [
      'a field of a named dataset of the wrong type',
      doc(product({ datasets: [{ name: 'ok' }, { name: 'x', description: 5 }] })),
      `${P}product "acme" (products[0]), dataset "x" (datasets[1]), field description: Expected string, received number`,
    ],
    [
      'a field of a named filter of the wrong type',
      doc(product({ filters: [{ param: 'site', allowed: 'north' }] })),
      `${P}product "acme" (products[0]), filter "site" (filters[0]), field allowed: Expected array, received string`,
    ],
    [
      'a dataset without name',
      doc(product({ datasets: [{ description: 'x' }] })),
      `${P}product "acme" (products[0]), dataset datasets[0], field name: Required`,
    ],
    [
      'an empty allowed list',
      doc(product({ filters: [{ param: 'site', allowed: [] }] })),
      `${P}product "acme" (products[0]), filter "site" (filters[0]), field allowed: allowed is a list of values or null (any value)`,
    ],
    [
      'an empty allowed value',
      doc(product({ filters: [{ param: 'site', allowed: ['a', ''] }] })),
      `${P}product "acme" (products[0]), filter "site" (filters[0]), field allowed, [1]: an allowed value is empty`,
    ],
    [
      'a bad product id',
      doc(product({ id: 'Acme' })),
      `${P}product "Acme" (products[0]): id must match ^[a-z][a-z0-9_]{0,31}$ (lowercase letters, digits, _; at most 32)`,
    ],
    ['a product id too long', doc(product({ id: 'a'.repeat(33) })), new RegExp(`^${P}product "a{33}" \\(products\\[0\\]\\): id must match`)],
    ['a product id with a leading digit', doc(product({ id: '1acme' })), /: id must match/],
    ['a product id with a trailing dash', doc(product({ id: 'acme-' })), /: id must match/],
    [
      'a product named like a route',
      doc(product({ id: 'catalog' })),
      `${P}product "catalog" (products[0]): id "catalog" is a route word of the API (${ROUTE_WORDS.join(', ')})`,
    ],
    ['a duplicate product', doc(product(), product({ name: 'again' })), `${P}product "acme" (products[1]): id "acme" appears twice`],
    [
      'a floor not a date',
      doc(product({ floor: '2026-2-1' })),
      `${P}product "acme" (products[0]), field floor: "2026-2-1" is not a date YYYY-MM-DD (or null: no floor)`,
    ],
    ['a floor with a time', doc(product({ floor: '2026-02-01T00:00Z' })), /field floor: "2026-02-01T00:00Z" is not a date/],
    ['a floor before text', doc(product({ floor: 'x2026-02-01' })), /field floor: "x2026-02-01" is not a date/],
    ['a floor that does not exist', doc(product({ floor: '2026-02-30' })), /field floor: "2026-02-30" is not a date/],
    [
      'a bad filter param',
      doc(product({ filters: [{ param: 'Site', allowed: null }] })),
      `${P}product "acme" (products[0]), filter "Site" (filters[0]): param must match ^[a-z][a-z0-9_]{0,63}$ (it is a series-key column)`,
    ],
    ['a filter param too long', doc(product({ filters: [{ param: 'p'.repeat(65), allowed: null }] })), /filter "p{65}" \(filters\[0\]\): param must match/],
    ['a filter param with a space', doc(product({ filters: [{ param: 'a b', allowed: null }] })), /: param must match/],
    [
      'a reserved filter param',
      doc(product({ filters: [{ param: 'as_of', allowed: null }] })),
      `${P}product "acme" (products[0]), filter "as_of" (filters[0]): "as_of" is a query parameter of the API (${RESERVED_PARAMS.join(', ')})`,
    ],
    [
      'a duplicate filter',
      doc(
        product({
          filters: [
            { param: 'site', allowed: null },
            { param: 'site', allowed: ['a'] },
          ],
        }),
      ),
      `${P}product "acme" (products[0]), filter "site" (filters[1]): param "site" appears twice`,
    ],
    [
      'an allowed value twice',
      doc(product({ filters: [{ param: 'site', allowed: ['a', 'b', 'a'] }] })),
      `${P}product "acme" (products[0]), filter "site" (filters[0]), field allowed: a value appears twice`,
    ],
    [
      'a bad dataset name',
      doc(product({ datasets: [{ name: 'Sites' }] })),
      `${P}product "acme" (products[0]), dataset "Sites" (datasets[0]): name must match ^[a-z][a-z0-9_]{0,63}$ (lowercase letters, digits, _; at most 64)`,
    ],
    ['a dataset name too long', doc(product({ datasets: [{ name: 'd'.repeat(65) }] })), /dataset "d{65}" \(datasets\[0\]\): name must match/],
    ['a dataset name with a leading _', doc(product({ datasets: [{ name: '_x' }] })), /: name must match/],
    ['a dataset name with a trailing dot', doc(product({ datasets: [{ name: 'x.' }] })), /: name must match/],
    [
      'a dataset named like a route',
      doc(product({ datasets: [{ name: 'walk_forward' }] })),
      `${P}product "acme" (products[0]), dataset "walk_forward" (datasets[0]): name "walk_forward" is a route word of the API (${ROUTE_WORDS.join(', ')})`,
    ],
    [
      'a duplicate dataset',
      doc(product({ datasets: [{ name: 'sites' }, { name: 'sites' }] })),
      `${P}product "acme" (products[0]), dataset "sites" (datasets[1]): name "sites" appears twice in acme`,
    ],
  ])('%s', (_, input, message) => {
    const text =
      input instanceof Uint8Array
        ? (() => {
            try {
              parseCatalogDocument(input);
            } catch (e) {
              expect(e).toBeInstanceOf(OpsError);
              return (e as Error).message;
            }
            throw new Error('accepted');
          })()
        : refusal(input);
    if (typeof message === 'string') expect(text).toBe(message);
    else expect(text).toMatch(message);
  });

  it('the same dataset name in two products is fine', () => {
    expect(catalogFromJson(doc(product(), product({ id: 'other' }))).ids()).toEqual(['acme/sites', 'other/sites']);
  });

  it('every route word is refused as a product id and as a dataset name', () => {
    for (const word of ROUTE_WORDS) {
      // openapi.json is no id already (a dot): refused by the pattern before the list
      expect(refusal(doc(product({ id: word })))).toMatch(word === 'openapi.json' ? /id must match/ : /is a route word/);
      expect(refusal(doc(product({ datasets: [{ name: word }] })))).toMatch(word === 'openapi.json' ? /name must match/ : /is a route word/);
    }
  });
});

describe('reserved filter parameters', () => {
  // A filter named like a parameter would be read as that parameter: each parser must accept
  // every name here as its own (not as a filter), and none outside it.
  it('are the query parameters of query, walk_forward, vintages and asof_join (format and columns: format/presentation.ts reads them first)', () => {
    const noFilter: ProductSpec = {
      id: 'p',
      name: 'P',
      floor: null,
      datasets: [{ name: 'd', description: '' }],
      filters: [{ param: 'zz_unused', allowed: null }],
    };
    const own = (parse: (q: string) => unknown, param: string): boolean => {
      try {
        parse(`${param}=1`);
        return true;
      } catch (e) {
        return !(e instanceof ApiError && e.code === 'unknown_parameter');
      }
    };
    const parsers = [
      (q: string) => parseQuery(q, noFilter, 'd'),
      (q: string) => parseWalkForward(q, noFilter, 'd'),
      (q: string) => parseVintages(q, noFilter, 'd'),
      (q: string) => parseJoinQuery(q, noFilter),
    ];
    const known = new Set(RESERVED_PARAMS);
    for (const param of RESERVED_PARAMS.filter((p) => p !== 'format' && p !== 'columns'))
      expect(
        parsers.some((parse) => own(parse, param)),
        param,
      ).toBe(true);
    for (const param of ['country', 'site', 'x', 'step_size', 'decision']) expect(known.has(param)).toBe(false);
    for (const param of ['foo', 'page', 'offset'])
      expect(
        parsers.some((parse) => own(parse, param)),
        param,
      ).toBe(false);
  });
});

describe('Catalog helpers', () => {
  const p = (over: Partial<ProductSpec> = {}): ProductSpec => ({ id: 'a', name: 'A', floor: '2026-01-01', filters: [], datasets: [], ...over });
  it('sameServing: the floor and the filters decide, not the name or the datasets', () => {
    expect(sameServing(p(), p({ name: 'B', datasets: [{ name: 'x', description: '' }] }))).toBe(true);
    expect(sameServing(p(), p({ floor: '2026-01-02' }))).toBe(false);
    expect(sameServing(p(), p({ floor: null }))).toBe(false);
    expect(sameServing(p({ filters: [{ param: 'x', allowed: null }] }), p({ filters: [{ param: 'x', allowed: ['v'] }] }))).toBe(false);
    expect(sameServing(p({ filters: [{ param: 'x', allowed: null }] }), p({ filters: [{ param: 'x', allowed: null }] }))).toBe(true);
  });
  it('floorUsOf: the end of the floor day in µs; no floor is -Infinity', () => {
    expect(floorUsOf(null)).toBe(-Infinity);
    expect(floorUsOf('2026-01-13')).toBe((Date.UTC(2026, 0, 14) - 1) * 1000 + 999);
  });
  it('products.ts: the built-in catalog for tools on the demo data', () => {
    expect(PRODUCTS).toBe(BUILTIN_CATALOG.products);
    expect(findProduct('glmi')?.filters).toEqual([{ param: 'basin', allowed: ['atlantic', 'pacific', 'middle_east'] }]);
    expect(findProduct('acme')).toBeUndefined();
    expect(isNamedDataset('pemi', 'grid_stress')).toBe(true);
    expect(isNamedDataset('pemi', 'marginality')).toBe(false);
    expect(allNamedDatasets()).toEqual(BUILTIN_CATALOG.entries.map((e) => ({ productId: e.product.id, dataset: e.dataset.name })));
    expect(allNamedDatasets()[0]).toEqual({ productId: 'gbsi_us', dataset: 'system_stress' });
  });

  it('an empty catalog has no entries', () => {
    const c = new Catalog([]);
    expect(c.ids()).toEqual([]);
    expect(c.product('a')).toBeUndefined();
  });
});

describe('catalog.json at a source', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-catalog-doc-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('absent: the built-in catalog; present: read once, then unchanged until it changes; invalid: refused with its etag', async () => {
    const source = new LocalSource(join(dir, 'read'));
    expect(await readCatalog(source, null)).toEqual({ status: 'absent', catalog: BUILTIN_CATALOG });
    expect(await catalogInForce(source)).toEqual({ catalog: BUILTIN_CATALOG, etag: null });
    const mine = catalogFromJson(doc(product()));
    await writeCatalog(source, mine, null);
    const ok = await readCatalog(source, null);
    expect(ok.status).toBe('ok');
    const etag = (ok as { etag: string }).etag;
    expect((ok as { catalog: Catalog }).catalog.products).toEqual(mine.products);
    expect(await readCatalog(source, etag)).toEqual({ status: 'unchanged' });
    const inForce = await catalogInForce(source);
    expect(inForce.etag).toBe(etag);
    expect(inForce.catalog.ids()).toEqual(['acme/sites']);
    await writeFile(join(dir, 'read', 'catalog.json'), '{"format": "pitcache-catalog/1", "products": [{"id": "x"}]}');
    const bad = await readCatalog(source, etag);
    expect(bad.status).toBe('invalid');
    expect((bad as { error: Error }).error.message).toMatch(/product "x"/);
    expect((bad as { etag: string }).etag).not.toBe(etag);
    await expect(catalogInForce(source)).rejects.toThrow(/catalog\.json is invalid/);
  });

  it('a write conditional on what was read: refused once the file changed, or appeared; nothing written then', async () => {
    const source = new LocalSource(join(dir, 'write'));
    const one = catalogFromJson(doc(product({ id: 'one' })));
    const two = catalogFromJson(doc(product({ id: 'two' })));
    expect(await writeCatalog(source, one, null)).toEqual({ enforced: true });
    await expect(writeCatalog(source, two, null)).rejects.toThrow(CatalogConflictError);
    await expect(writeCatalog(source, two, null)).rejects.toThrow(
      'catalog.json changed since it was read (another writer?): nothing was written; run it again',
    );
    const read = await catalogInForce(source);
    expect(read.catalog.ids()).toEqual(['one/sites']);
    await expect(writeCatalog(source, two, '"stale"')).rejects.toThrow(CatalogConflictError);
    await writeCatalog(source, two, read.etag);
    expect((await catalogInForce(source)).catalog.ids()).toEqual(['two/sites']);
    // the etag read before the second write no longer matches
    await expect(writeCatalog(source, one, read.etag)).rejects.toThrow(CatalogConflictError);
    expect((await catalogInForce(source)).catalog.ids()).toEqual(['two/sites']);
  });
});

/**
 * A folder store that ignores write conditions, as some S3-compatible stores do (it says so:
 * enforced false), and may have another writer land right after each write of ours.
 */
class UnconditionalSource extends LocalSource {
  /** what the other writer does right after ours: writes these bytes, or deletes the object */
  racer: Uint8Array | 'delete' | null = null;
  constructor(private readonly folder: string) {
    super(folder);
  }
  override async writeObject(path: string, bytes: Uint8Array, _condition?: WriteCondition): Promise<WriteResult> {
    const r = await super.writeObject(path, bytes);
    if (this.racer === 'delete') await rm(join(this.folder, path));
    else if (this.racer !== null) await super.writeObject(path, this.racer);
    return r;
  }
}

/** A folder store that enforces conditions, with a writer landing right after each write of ours. */
class RacedEnforcingSource extends LocalSource {
  racer: Uint8Array | null = null;
  override async writeObject(path: string, bytes: Uint8Array, condition?: WriteCondition): Promise<WriteResult> {
    const r = await super.writeObject(path, bytes, condition);
    if (this.racer !== null) await super.writeObject(path, this.racer);
    return r;
  }
}

describe('catalog.json on a store that does not enforce conditional writes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-catalog-unc-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const one = catalogFromJson(doc(product({ id: 'one' })));
  const two = catalogFromJson(doc(product({ id: 'two' })));

  it('checks before writing: a catalog.json that appeared, or changed since it was read, is not overwritten', async () => {
    const source = new UnconditionalSource(join(dir, 'pre'));
    expect(await writeCatalog(source, one, null)).toEqual({ enforced: false });
    const text = await readFile(join(dir, 'pre', 'catalog.json'), 'utf8');
    await expect(writeCatalog(source, two, null)).rejects.toThrow(CatalogConflictError);
    await expect(writeCatalog(source, two, '"stale"')).rejects.toThrow('changed since it was read');
    expect(await readFile(join(dir, 'pre', 'catalog.json'), 'utf8')).toBe(text);
    const { etag } = await catalogInForce(source);
    expect(await writeCatalog(source, two, etag)).toEqual({ enforced: false });
    expect((await catalogInForce(source)).catalog.ids()).toEqual(['two/sites']);
  });

  it('reads back after writing: another writer landing right after ours is reported', async () => {
    const source = new UnconditionalSource(join(dir, 'race'));
    source.racer = catalogBytes(two);
    const e = await writeCatalog(source, one, null).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CatalogConflictError);
    expect((e as Error).name).toBe('CatalogConflictError');
    expect((e as Error).message).toBe(
      'catalog.json was overwritten by another writer right after ours (the store does not enforce conditional writes); check it and set it again',
    );
  });

  it('another writer deleting it right after ours is reported too', async () => {
    const source = new UnconditionalSource(join(dir, 'gone'));
    source.racer = 'delete';
    await expect(writeCatalog(source, one, null)).rejects.toThrow(CatalogConflictError);
  });

  it('two writers at once on a store that enforces conditions: exactly one wins, the other is told', async () => {
    const source = new LocalSource(join(dir, 'both'));
    const results = await Promise.allSettled([writeCatalog(source, one, null), writeCatalog(source, two, null)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(CatalogConflictError);
    // refused by the read before or by the conditional write itself: nothing of it was written either way
    expect((lost.reason as Error).message).toBe('catalog.json changed since it was read (another writer?): nothing was written; run it again');
    const won = results.findIndex((r) => r.status === 'fulfilled');
    expect((await catalogInForce(source)).catalog.ids()).toEqual([won === 0 ? 'one/sites' : 'two/sites']);
  });

  it('a store that enforces conditions is trusted: no read-back', async () => {
    const source = new RacedEnforcingSource(join(dir, 'enforced'));
    source.racer = catalogBytes(two);
    expect(await writeCatalog(source, one, null)).toEqual({ enforced: true });
  });

  it('a source that cannot answer is source_unreachable, naming the read', async () => {
    await mkdir(join(dir, 'broken', 'catalog.json'), { recursive: true });
    const e = await readCatalog(new LocalSource(join(dir, 'broken')), null).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpsError);
    expect((e as OpsError).code).toBe('source_unreachable');
    expect((e as Error).message).toContain('reading catalog.json');
  });
});
