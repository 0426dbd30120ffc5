import { createHash } from 'node:crypto';
import type { Catalog, FilterSpec } from '../catalog/catalog.js';
import template from './openapi.json' with { type: 'json' };

/**
 * The OpenAPI document of a catalog (contract 13): openapi.json is the template, generic
 * over datasets (`/{product_id}/{dataset_name}`, the client's types come from it); the
 * document served at `/openapi.json` has instead one path per dataset of the catalog and
 * endpoint, each with its product's filters as query parameters, so that a generated
 * client or a reader of the document sees exactly what the catalog in force serves.
 */
type Json = Record<string, unknown>;
type Operation = Json & { operationId: string; parameters?: Json[] };

const DATA_TEMPLATE = '/{product_id}/{dataset_name}';
/** Each data endpoint's path after `/{product}/{dataset}`, and whether it takes filters in its query (asof_join's events carry the series key instead). */
const ENDPOINTS: ReadonlyArray<readonly [suffix: string, filtered: boolean]> = [
  ['', true],
  ['/walk_forward', true],
  ['/vintages', true],
  ['/asof_join', false],
];
/** The template's parameters a concrete path replaces: the path's two words, and the catch-all of filters. */
const PATH_PARAMETERS = ['#/components/parameters/Product', '#/components/parameters/Dataset'];
const FILTER_PARAMETER = '#/components/parameters/Filter';

function clone<T>(value: T): T {
  return structuredClone(value);
}

function regexEscape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** One filter as a query parameter: a value or a comma-separated list (any of them); a closed list becomes a pattern. */
export function filterParameter(f: FilterSpec, productId: string): Json {
  const one = f.allowed === null ? null : `(?:${f.allowed.map(regexEscape).join('|')})`;
  return {
    name: f.param,
    in: 'query',
    required: false,
    schema: one === null ? { type: 'string', minLength: 1 } : { type: 'string', pattern: `^${one}(?:,${one})*$` },
    description:
      `Series-key filter ${f.param} of ${productId}: a value, or values separated by commas (any of them)` +
      (f.allowed === null ? '.' : `; one of ${f.allowed.join(', ')}.`),
  };
}

/** A concrete path's operation: the template's, without the path words, with the product's filters. */
function operationFor(op: Operation, productId: string, dataset: string, filters: readonly FilterSpec[], summary: string): Operation {
  const out = clone(op);
  out.operationId = `${productId}.${dataset}.${op.operationId}`;
  out.summary = `${String(op.summary)}: ${summary}`;
  const params: Json[] = [];
  for (const p of op.parameters ?? []) {
    const ref = p.$ref;
    if (typeof ref === 'string' && PATH_PARAMETERS.includes(ref)) continue;
    if (ref === FILTER_PARAMETER) {
      for (const f of filters) params.push(filterParameter(f, productId));
      continue;
    }
    params.push(clone(p));
  }
  out.parameters = params;
  return out;
}

/** The OpenAPI document of `catalog`: the template's paths other than the data ones, one path per dataset and data endpoint. */
export function openapiDocument(catalog: Catalog): Json {
  const doc = clone(template) as unknown as Json & { paths: Record<string, Record<string, Operation>>; components: Json };
  const paths: Record<string, Record<string, Operation>> = {};
  for (const e of catalog.entries) {
    const { product, dataset } = e;
    const floor = product.floor === null ? 'no vintage floor' : `vintage floor ${product.floor}`;
    const summary = `${product.id}/${dataset.name}${dataset.description === '' ? '' : ` (${dataset.description})`}`;
    for (const [suffix, filtered] of ENDPOINTS) {
      const generic = doc.paths[DATA_TEMPLATE + suffix]!;
      const item: Record<string, Operation> = {};
      for (const [method, op] of Object.entries(generic)) {
        const concrete = operationFor(op, product.id, dataset.name, filtered ? product.filters : [], summary);
        concrete.description = `${product.name}, ${floor}. ${String(op.description ?? '')}`.trim();
        item[method] = concrete;
      }
      paths[`/${product.id}/${dataset.name}${suffix}`] = item;
    }
  }
  for (const [path, item] of Object.entries(doc.paths)) if (!path.startsWith(DATA_TEMPLATE)) paths[path] = item;
  doc.paths = paths;
  doc.components = usedComponents(doc.components, paths);
  return doc;
}

/** Sections of components reached by `$ref` (securitySchemes are named by `security`, not referenced). */
const REFERENCED = ['parameters', 'headers', 'responses', 'schemas'];

/**
 * The components the paths reach, directly or through one another: the template's generic
 * parameters are gone, and a catalog without datasets uses none of the data endpoints'.
 */
function usedComponents(components: Json, paths: object): Json {
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) for (const v of node) visit(v);
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') && !used.has(v)) {
          used.add(v);
          const [section, name] = v.slice('#/components/'.length).split('/');
          visit((components[section!] as Json | undefined)?.[name!]);
        } else visit(v);
      }
    }
  };
  visit(paths);
  const out: Json = { ...components };
  for (const section of REFERENCED) {
    const all = components[section] as Json | undefined;
    if (all !== undefined) out[section] = Object.fromEntries(Object.entries(all).filter(([name]) => used.has(`#/components/${section}/${name}`)));
  }
  return out;
}

/** The document of one catalog as served: its bytes and a strong ETag of them. */
export interface ServedDocument {
  readonly catalog: Catalog;
  readonly body: Uint8Array;
  readonly etag: string;
}

export function servedDocument(catalog: Catalog): ServedDocument {
  const body = Buffer.from(JSON.stringify(openapiDocument(catalog)));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { catalog, body, etag };
}
