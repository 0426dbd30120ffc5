/**
 * Contract 9: for random snapshots of every named dataset (every Arrow type of contract 6)
 * and random queries, every page of the cursor chain in csv and arrow holds exactly the
 * JSON page's rows, cell by cell, read by third-party readers: csv-parse, apache-arrow and
 * nodejs-polars (Rust polars). Headers carry the envelope; a chain may switch format.
 */
import { tableFromIPC, type Table as ArrowTable } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { micros } from './support/fixtures.js';
import { csvText, fromArrow, type Json } from './support/format-cells.js';
import { Rng, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';

const TARGETS = [
  ['gbsi_us', 'system_stress'],
  ['gbsi_eu', 'system_stress'],
  ['pemi', 'grid_stress'],
  ['glmi', 'marginality'],
  ['wrsi', 'forecast_stress'],
  ['wssi_us', 'demand_shock'],
] as const;
const snaps: GeneratedSnapshot[] = TARGETS.map(([p, d], i) => generateSnapshot(90_210 + i * 31, p, d));

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.spec })) });
});
afterAll(async () => h?.close());

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(h.url + path, { headers: { 'x-api-key': TEST_KEY, 'accept-encoding': 'identity', ...headers } });
}

/** The same cell from polars (no µs in its JS dates, Int64 as a JS number): compared at what polars can hold. */
function polarsMatches(v: unknown, type: string, json: Json): boolean {
  if (json === null) return v === null || (typeof v === 'number' && !Number.isFinite(v));
  if (type.startsWith('Date32')) return v instanceof Date && v.toISOString().slice(0, 10) === json;
  if (type.startsWith('Timestamp')) {
    // polars hands JS Dates truncated to ms (towards zero, before 1970 too)
    const us = micros(json as string);
    return v instanceof Date && (v.getTime() === Math.trunc(us / 1000) || v.getTime() === Math.floor(us / 1000));
  }
  if (typeof json === 'string' && /^-?\d+$/.test(json)) return typeof v === 'number' && v === Number(json);
  return v === json;
}

function rng(seed: number): Rng {
  return new Rng(seed);
}

type Endpoint = '' | '/walk_forward' | '/vintages';
const ENDPOINTS: readonly Endpoint[] = ['', '/walk_forward', '/vintages'];
const dateOf = (d: number): string => new Date(d * 86_400_000).toISOString().slice(0, 10);

function randomQuery(r: Rng, s: GeneratedSnapshot, endpoint: Endpoint): string {
  const parts: string[] = [];
  if (endpoint === '/walk_forward') {
    const from = r.int(s.firstDay - 3, s.lastDay);
    parts.push(`decision_from=${dateOf(from)}`, `decision_to=${dateOf(from + r.int(0, 20))}`, `step=${r.int(1, 5)}`, `window=${r.int(0, 20)}`);
    parts.push(`limit=${r.int(1, 60)}`);
    return parts.join('&');
  }
  if (endpoint === '/vintages') {
    if (r.chance(0.5)) parts.push(`date_from=${dateOf(r.int(s.firstDay, s.lastDay))}`);
    if (r.chance(0.5)) parts.push(`as_of=${new Date(r.pick(s.instantsUs) / 1000).toISOString()}`);
    if (r.chance(0.3)) parts.push('release=first');
    parts.push(`limit=${r.int(1, 40)}`);
    return parts.join('&');
  }
  const kind = r.int(0, 2);
  if (kind === 0) parts.push('latest=false');
  if (kind === 1) parts.push(`date_from=${dateOf(r.int(s.firstDay, s.lastDay))}`);
  if (r.chance(0.5)) parts.push(`as_of=${new Date(r.pick(s.instantsUs) / 1000).toISOString()}`);
  parts.push(`limit=${r.int(1, 40)}`);
  return parts.join('&');
}

/** The computed columns of an endpoint (contract 10, 11) and the Arrow type each must have. */
const COMPUTED: Readonly<Record<Endpoint, ReadonlyArray<readonly [string, string]>>> = {
  '': [],
  '/walk_forward': [
    ['decision_date', 'Date32<DAY>'],
    ['floor_applied', 'Bool'],
  ],
  '/vintages': [
    ['visible_from', 'Timestamp<MICROSECOND, UTC>'],
    ['visible_to', 'Timestamp<MICROSECOND, UTC>'],
  ],
};

describe.each(snaps.flatMap((s) => ENDPOINTS.map((e) => [`${s.productId}/${s.dataset}${e}`, s, e] as const)))(
  '%s: csv and arrow pages equal the json pages',
  (_name, snap, endpoint) => {
    it('cell by cell, every page of random cursor chains, chains switching format page by page', async () => {
      const r = rng(snap.seed ^ 0x1234567 ^ endpoint.length);
      let seen = 0;
      for (let q = 0; q < 5; q++) {
        const base = `/${snap.productId}/${snap.dataset}${endpoint}?${randomQuery(r, snap, endpoint)}`;
        let cursor: string | null = null;
        for (let page = 0; page < 30; page++) {
          const path = cursor === null ? base : `${base}&cursor=${cursor}`;
          const jr = await get(path);
          expect(jr.status, path).toBe(200);
          const env = (await jr.json()) as { count: number; next_cursor?: string; data: Array<Record<string, Json>>; metadata: Record<string, Json> };
          const names = env.data.length > 0 ? Object.keys(env.data[0]!) : null;
          seen += env.count;

          // csv
          const cr = await get(`${path}&format=csv`);
          expect(cr.headers.get('content-type')).toBe('text/csv; charset=utf-8');
          const csvBody = await cr.text();
          const records = parse(csvBody, { relax_column_count: false }) as string[][];
          const [header, ...body] = records;
          expect(body.length).toBe(env.count);
          if (names !== null) expect(header).toEqual(names);
          body.forEach((rec, i) => expect(rec, `${path} csv row ${i}`).toEqual(names!.map((n) => csvText(env.data[i]![n]!))));
          expect(csvBody.endsWith('\n') && !csvBody.includes('\r\n')).toBe(true);

          // arrow: apache-arrow and polars
          const ar = await get(`${path}&format=arrow`);
          expect(ar.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
          const bytes = Buffer.from(await ar.arrayBuffer());
          const t: ArrowTable = tableFromIPC(bytes);
          expect(t.numRows).toBe(env.count);
          expect(JSON.parse(t.schema.metadata.get('pitcache.series_key')!)).toEqual(snap.seriesKey);
          const arrowEnv = JSON.parse(t.schema.metadata.get('pitcache.envelope')!) as Record<string, unknown>;
          expect(arrowEnv['count']).toBe(env.count);
          expect(arrowEnv['next_cursor']).toBe(env.next_cursor);
          expect(arrowEnv).not.toHaveProperty('data');
          for (const def of snap.columns) {
            const field = t.schema.fields.find((f) => f.name === def.name)!;
            const expectType = { float32: 'Float32', float64: 'Float64', int64: 'Int64', bool: 'Bool', utf8: 'Utf8', 'dict-utf8': 'Utf8', date32: 'Date32' }[
              def.type as string
            ];
            if (expectType !== undefined) expect(String(field.type), def.name).toMatch(new RegExp(`^${expectType}`));
            if (def.type === 'timestamp')
              expect(String(field.type)).toBe(`Timestamp<${{ s: 'SECOND', ms: 'MILLISECOND', us: 'MICROSECOND' }[def.unit!]}, UTC>`);
          }
          const computed = COMPUTED[endpoint];
          for (const [name, type] of computed) expect(String(t.schema.fields.find((f) => f.name === name)?.type), name).toBe(type);
          // Computed columns where the contract puts them: decision_date first and floor_applied last, visible_from/to last.
          const fieldNames = t.schema.fields.map((f) => f.name);
          expect(fieldNames).toEqual(
            endpoint === '/walk_forward'
              ? ['decision_date', ...snap.columns.map((c) => c.name), 'floor_applied']
              : [...snap.columns.map((c) => c.name), ...computed.map(([n]) => n)],
          );
          const df = env.count > 0 ? pl.readIPCStream(bytes) : null;
          const polarsRows = df?.toRecords() ?? [];
          for (let i = 0; i < env.count; i++) {
            for (const f of t.schema.fields) {
              const json = env.data[i]![f.name]!;
              expect(fromArrow(t.getChild(f.name)!.get(i), String(f.type), json), `${path} arrow row ${i} ${f.name}`).toEqual(json);
              expect(
                polarsMatches(polarsRows[i]![f.name], String(f.type), json),
                `${path} polars row ${i} ${f.name}: ${String(polarsRows[i]![f.name])} vs ${String(json)}`,
              ).toBe(true);
            }
          }

          // The envelope in headers, the same for every format.
          for (const res of [jr, cr, ar]) {
            expect(res.headers.get('x-count')).toBe(String(env.count));
            expect(res.headers.get('x-total-count')).toBe(String(env.metadata['total_count']));
            expect(res.headers.get('x-has-more')).toBe(String(env.next_cursor !== undefined));
            expect(res.headers.get('x-next-cursor')).toBe(env.next_cursor ?? null);
            expect(res.headers.get('x-data-latest-date')).toBe(env.metadata['data_latest_date'] as string | null);
            expect(res.headers.get('vary')).toBe('Accept, Accept-Encoding');
            expect(res.headers.get('x-generation')).toBe('1');
            expect(res.headers.get('x-floor-applied')).toMatch(/^(true|false)$/);
            expect(res.headers.get('x-floor-applied')).toBe(jr.headers.get('x-floor-applied'));
          }
          if (env.next_cursor === undefined) break;
          expect(jr.headers.get('link')).toBe(`<${path.replace(/&cursor=[^&]*/, '')}&cursor=${env.next_cursor}>; rel="next"`);
          // The next page is asked for with the cursor an answer in another format gave.
          cursor = page % 2 === 0 ? cr.headers.get('x-next-cursor') : ar.headers.get('x-next-cursor');
        }
      }
      expect(seen, 'the random queries found rows').toBeGreaterThan(0);
    }, 120_000);
  },
);
