import { z } from 'zod';
import { OpsError } from '../ops-errors.js';
import { parseDate } from '../time/instant.js';
import { Catalog, type ProductSpec } from './catalog.js';

/** `<source>/catalog.json` (contract 13): the products, datasets, filters and floors a source serves. */
export const CATALOG_FORMAT = 'pitcache-catalog/1';
export const CATALOG_PATH = 'catalog.json';

const PRODUCT_ID = /^[a-z][a-z0-9_]{0,31}$/;
const DATASET_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** A filter is a series-key column: a name a query string carries without escaping. */
const FILTER_PARAM = /^[a-z][a-z0-9_]{0,63}$/;

/** Path words after or instead of `/{product}/{dataset}`: a product or dataset named so would shadow a route. */
export const ROUTE_WORDS: readonly string[] = [
  'walk_forward',
  'vintages',
  'asof_join',
  'admin',
  'catalog',
  'healthz',
  'readyz',
  'metrics',
  'openapi.json',
  'explore',
];

/**
 * Every query parameter of every endpoint (contracts 2, 9-12, 15, 16): a filter named so
 * would be read as that parameter. test/catalog-document.test.ts checks each parser takes every one.
 */
export const RESERVED_PARAMS: readonly string[] = [
  'latest',
  'date_from',
  'date_to',
  'as_of',
  'limit',
  'cursor',
  'generation',
  'format',
  'columns',
  'decision_from',
  'decision_to',
  'step',
  'window',
  'release',
  'max_age',
  'before_floor',
];

const filterSchema = z
  .object({
    param: z.string(),
    allowed: z.array(z.string().min(1, 'an allowed value is empty')).min(1, 'allowed is a list of values or null (any value)').nullable(),
  })
  .strict();

const datasetSchema = z
  .object({
    name: z.string(),
    description: z.string().default(''),
  })
  .strict();

const productSchema = z
  .object({
    id: z.string(),
    name: z.string().min(1, 'name is empty'),
    floor: z.string().nullable(),
    filters: z.array(filterSchema).default([]),
    datasets: z.array(datasetSchema),
  })
  .strict();

const documentSchema = z
  .object({
    format: z.literal(CATALOG_FORMAT, { errorMap: () => ({ message: `format must be "${CATALOG_FORMAT}"` }) }),
    products: z.array(productSchema),
  })
  .strict();

type Document = z.infer<typeof documentSchema>;

function refuse(message: string): never {
  throw new OpsError('catalog_invalid', `catalog.json is invalid: ${message}`);
}

/** Where an issue lies, in the words of the document: `product "pemi" (products[2]), dataset "x" (datasets[0]), field floor`. */
function where(json: unknown, path: ReadonlyArray<string | number>): string {
  const parts: string[] = [];
  let node: unknown = json;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const next = node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>)[key] : undefined;
    const prev = i > 0 ? path[i - 1] : undefined;
    if (typeof key === 'number' && (prev === 'products' || prev === 'datasets' || prev === 'filters')) {
      const label = prev === 'products' ? 'product' : prev === 'datasets' ? 'dataset' : 'filter';
      const nameField = prev === 'products' ? 'id' : prev === 'datasets' ? 'name' : 'param';
      const name = next !== null && typeof next === 'object' ? (next as Record<string, unknown>)[nameField] : undefined;
      parts.push(typeof name === 'string' ? `${label} "${name}" (${String(prev)}[${key}])` : `${label} ${String(prev)}[${key}]`);
    } else if (typeof key === 'string' && !(i + 1 < path.length && typeof path[i + 1] === 'number' && ['products', 'datasets', 'filters'].includes(key))) {
      parts.push(`field ${key}`);
    } else if (typeof key === 'number') {
      parts.push(`[${key}]`);
    }
    node = next;
  }
  return parts.length === 0 ? 'the document' : parts.join(', ');
}

/**
 * catalog.json's bytes -> a Catalog, or an OpsError (catalog_invalid) whose one-line message
 * names the product, dataset or field at fault and why. Nothing is half-applied: a catalog
 * is taken whole or refused whole.
 */
export function parseCatalogDocument(bytes: Uint8Array): Catalog {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (e) {
    refuse(`not JSON: ${(e as Error).message}`);
  }
  return catalogFromJson(json);
}

/** A parsed catalog document -> a Catalog (see parseCatalogDocument). */
export function catalogFromJson(json: unknown): Catalog {
  const r = documentSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0]!;
    const message = i.code === 'unrecognized_keys' ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}` : i.message;
    refuse(`${where(json, i.path)}: ${message}`);
  }
  return new Catalog(checked(r.data));
}

function checked(doc: Document): ProductSpec[] {
  const ids = new Set<string>();
  return doc.products.map((p, pi) => {
    const at = `product "${p.id}" (products[${pi}])`;
    if (!PRODUCT_ID.test(p.id)) refuse(`${at}: id must match ${PRODUCT_ID.source} (lowercase letters, digits, _; at most 32)`);
    if (ROUTE_WORDS.includes(p.id)) refuse(`${at}: id "${p.id}" is a route word of the API (${ROUTE_WORDS.join(', ')})`);
    if (ids.has(p.id)) refuse(`${at}: id "${p.id}" appears twice`);
    ids.add(p.id);
    if (p.floor !== null && (!/^\d{4}-\d{2}-\d{2}$/.test(p.floor) || parseDate(p.floor) === null)) {
      refuse(`${at}, field floor: "${p.floor}" is not a date YYYY-MM-DD (or null: no floor)`);
    }
    const params = new Set<string>();
    for (const [fi, f] of p.filters.entries()) {
      const fat = `${at}, filter "${f.param}" (filters[${fi}])`;
      if (!FILTER_PARAM.test(f.param)) refuse(`${fat}: param must match ${FILTER_PARAM.source} (it is a series-key column)`);
      if (RESERVED_PARAMS.includes(f.param)) refuse(`${fat}: "${f.param}" is a query parameter of the API (${RESERVED_PARAMS.join(', ')})`);
      if (params.has(f.param)) refuse(`${fat}: param "${f.param}" appears twice`);
      params.add(f.param);
      if (f.allowed !== null && new Set(f.allowed).size !== f.allowed.length) refuse(`${fat}, field allowed: a value appears twice`);
    }
    const names = new Set<string>();
    for (const [di, d] of p.datasets.entries()) {
      const dat = `${at}, dataset "${d.name}" (datasets[${di}])`;
      if (!DATASET_NAME.test(d.name)) refuse(`${dat}: name must match ${DATASET_NAME.source} (lowercase letters, digits, _; at most 64)`);
      if (ROUTE_WORDS.includes(d.name)) refuse(`${dat}: name "${d.name}" is a route word of the API (${ROUTE_WORDS.join(', ')})`);
      if (names.has(d.name)) refuse(`${dat}: name "${d.name}" appears twice in ${p.id}`);
      names.add(d.name);
    }
    return { id: p.id, name: p.name, floor: p.floor, filters: p.filters, datasets: p.datasets };
  });
}

/** A catalog in the form of catalog.json (what `pitcache catalog` prints and `--set` writes). */
export function catalogDocument(catalog: Catalog): object {
  return {
    format: CATALOG_FORMAT,
    products: catalog.products.map((p) => ({
      id: p.id,
      name: p.name,
      floor: p.floor,
      filters: p.filters.map((f) => ({ param: f.param, allowed: f.allowed })),
      datasets: p.datasets.map((d) => ({ name: d.name, description: d.description })),
    })),
  };
}

/** The bytes catalog.json is written as. */
export function catalogBytes(catalog: Catalog): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(catalogDocument(catalog), null, 2) + '\n');
}
