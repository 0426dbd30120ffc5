import { readFile } from 'node:fs/promises';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';

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
