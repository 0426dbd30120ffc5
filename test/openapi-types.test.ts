import { readFile } from 'node:fs/promises';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { components, operations } from '../src/client/openapi-types.js';

// The committed client types are generated from src/openapi/openapi.json (`npx openapi-typescript`,
// configured in redocly.yaml). Regenerating here means the two can never drift apart unnoticed.
describe('src/client/openapi-types.ts', () => {
  it('equals a fresh generation from the OpenAPI document', async () => {
    const doc = new URL('../src/openapi/openapi.json', import.meta.url);
    const fresh = astToString(await openapiTS(doc));
    const committed = await readFile(new URL('../src/client/openapi-types.ts', import.meta.url), 'utf8');
    expect(committed.slice(committed.indexOf('export '))).toBe(fresh.slice(fresh.indexOf('export ')));
  });
});

// The types stay generic over datasets (contract 13: the catalog is data): a product or
// dataset is any string of the catalog's shape, never a closed union of the built-in names,
// so the typed client compiles against a dataset of any catalog. (Checked by tsc: npm run typecheck.)
describe('the generated types are generic over the catalog', () => {
  it('types a product and a dataset as strings, filters as any parameter', () => {
    expectTypeOf<components['parameters']['Product']>().toEqualTypeOf<string>();
    expectTypeOf<components['parameters']['Dataset']>().toEqualTypeOf<string>();
    expectTypeOf<operations['query']['parameters']['path']['product_id']>().toEqualTypeOf<string>();
    expectTypeOf<components['parameters']['Filter']>().toEqualTypeOf<{ [key: string]: string }>();
    expectTypeOf<components['schemas']['CatalogDataset']['product_id']>().toEqualTypeOf<string>();
  });
});
