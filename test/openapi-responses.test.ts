/**
 * The OpenAPI document describes what the server really answers: GET /openapi.json serves
 * it without a key, and real responses of every endpoint and error status are validated
 * against the schema the document gives for (path, method, status, content type), with
 * ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, EU_KEY, TEST_KEY, defaultKeysJson, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const ID = 'https://pitcache.invalid/openapi.json';
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>> };

let h: Harness;
let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

const rows: PitRow[] = ['2026-03-02', '2026-03-03', '2026-03-04'].flatMap((date) =>
  ['DE', 'FR'].map((zone) => ({ date, eff: date, obs: `${date}T06:00:00Z`, key: { bidding_zone: zone }, tag: `${zone}${date}`, value: 1.5 })),
);

beforeAll(async () => {
  h = await startHarness({
    datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) }],
    keys: defaultKeysJson([{ id: 'slow', key: 'slow-key', products: ['*'], rate_limit: { per_second: 1, burst: 1 } }]),
  });
  const r = await fetch(`${h.url}/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as Doc;
  ajv.addSchema({ ...doc, $id: ID });
});
afterAll(async () => h?.close());

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/** Validates a real answer against the document's schema for it; returns ajv's errors (empty = valid). */
async function check(template: string, method: string, res: Response): Promise<unknown[]> {
  const op = doc.paths[template]![method]!;
  const status = String(res.status);
  const declared = op.responses[status];
  expect(declared, `${method} ${template} ${status} is not in the document`).toBeDefined();
  const base = declared!.$ref !== undefined ? declared!.$ref.slice(1) : `/${pointer('paths', template, method, 'responses', status)}`;
  const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!;
  const content = declared!.$ref !== undefined ? undefined : declared!.content;
  const key = content === undefined ? contentType : Object.keys(content).find((k) => k.split(';')[0] === contentType);
  expect(key, `${method} ${template} ${status}: ${contentType} is not a declared content type`).toBeDefined();
  if (!contentType.includes('json')) return [];
  const validate = ajv.compile({ $ref: `${ID}#${base}/${pointer('content', key!, 'schema')}` });
  return validate(await res.json()) ? [] : (validate.errors ?? []);
}

const get = (path: string, key: string | null = TEST_KEY, init: RequestInit = {}): Promise<Response> =>
  fetch(h.url + path, { ...init, headers: { ...(key === null ? {} : { 'x-api-key': key }), ...(init.headers as Record<string, string> | undefined) } });

describe('the OpenAPI document', () => {
  it('is served at /openapi.json without a key, as OpenAPI 3.1', () => {
    expect((doc as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it.each([
    ['/pemi/grid_stress', 'get', '/pemi/grid_stress?latest=false&limit=2', TEST_KEY],
    ['/pemi/grid_stress', 'get', '/pemi/grid_stress?as_of=2026-03-03&columns=value', TEST_KEY],
    ['/pemi/grid_stress', 'get', '/pemi/grid_stress?limit=0', TEST_KEY],
    ['/pemi/grid_stress', 'get', '/pemi/grid_stress?nope=1', TEST_KEY],
    ['/pemi/grid_stress', 'get', '/pemi/grid_stress', null],
    ['/glmi/marginality', 'get', '/glmi/marginality', EU_KEY],
    // a path naming no dataset has no path of its own: its 404 is any data path's
    ['/pemi/grid_stress', 'get', '/nope/grid_stress', TEST_KEY],
    ['/glmi/marginality', 'get', '/glmi/marginality', TEST_KEY],
    ['/pemi/grid_stress/walk_forward', 'get', '/pemi/grid_stress/walk_forward?decision_from=2026-03-02&decision_to=2026-03-04&window=1&limit=3', TEST_KEY],
    ['/pemi/grid_stress/walk_forward', 'get', '/pemi/grid_stress/walk_forward?decision_from=2026-03-02&decision_to=2026-03-04&columns=value', TEST_KEY],
    ['/pemi/grid_stress/walk_forward', 'get', '/pemi/grid_stress/walk_forward?decision_from=2026-03-02', TEST_KEY],
    ['/pemi/grid_stress/walk_forward', 'get', '/pemi/grid_stress/walk_forward?decision_from=2026-03-02&decision_to=2026-03-04&as_of=2026-03-02', TEST_KEY],
    ['/glmi/marginality/walk_forward', 'get', '/glmi/marginality/walk_forward?decision_from=2026-03-02&decision_to=2026-03-04', TEST_KEY],
    ['/pemi/grid_stress/vintages', 'get', '/pemi/grid_stress/vintages?limit=2', TEST_KEY],
    ['/pemi/grid_stress/vintages', 'get', '/pemi/grid_stress/vintages?as_of=2026-03-03&release=first', TEST_KEY],
    ['/pemi/grid_stress/vintages', 'get', '/pemi/grid_stress/vintages?release=last', TEST_KEY],
    ['/pemi/grid_stress/vintages', 'get', '/pemi/grid_stress/vintages', null],
    ['/healthz', 'get', '/healthz', null],
    ['/readyz', 'get', '/readyz', null],
    ['/openapi.json', 'get', '/openapi.json', null],
    ['/catalog', 'get', '/catalog', TEST_KEY],
    ['/catalog', 'get', '/catalog', null],
    ['/admin/status', 'get', '/admin/status', ADMIN_KEY],
    ['/admin/status', 'get', '/admin/status', TEST_KEY],
    ['/metrics', 'get', '/metrics', ADMIN_KEY],
    ['/metrics', 'get', '/metrics', TEST_KEY],
    ['/metrics', 'get', '/metrics', null],
  ])('%s %s: %s (key %s) matches its declared schema', async (template, method, path, key) => {
    expect(await check(template, method, await get(path, key))).toEqual([]);
  });

  it('405, 406 and 429 answers match too', async () => {
    expect(await check('/pemi/grid_stress', 'get', await get('/pemi/grid_stress', TEST_KEY, { headers: { accept: 'text/html' } }))).toEqual([]);
    const post = await get('/pemi/grid_stress', TEST_KEY, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(await check('/pemi/grid_stress', 'get', post)).toEqual([]);
    await get('/pemi/grid_stress', 'slow-key');
    const limited = await get('/pemi/grid_stress', 'slow-key');
    expect(limited.status).toBe(429);
    expect(await check('/pemi/grid_stress', 'get', limited)).toEqual([]);
  });

  it('a wrong body fails validation (the check is real)', async () => {
    const validate = ajv.compile({ $ref: `${ID}#/components/schemas/ErrorBody` });
    expect(validate({ error: { status: 400 } })).toBe(false);
  });
});
