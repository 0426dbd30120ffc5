/**
 * The join of contract 15 in process (join/join-compute.ts: body bytes in, answer bytes out,
 * what the serving thread and the join worker both run), against the naive reference model
 * over random snapshots: random events (existing and unknown series, `at` as dates and as
 * instants with offsets, before any data, before the floor, far ahead), every body format,
 * every answer format, `max_age`, `columns`, `before_floor`; and every bad body of contract
 * 15 a 400 naming its row and column (the limits of 1,000,000 events: contract-asof-join-limits.test.ts). The same as differential-asof-join.test.ts and
 * contract-asof-join.test.ts without a server, so that a mutation run of join/ is quick.
 */
import { isDeepStrictEqual } from 'node:util';
import { Int32, Table, TimestampMillisecond, Utf8, tableFromIPC, tableToIPC, vectorFromArray, type Vector } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { floorUsOf } from '../src/catalog/catalog.js';
import { findProduct } from '../src/catalog/products.js';
import { ApiError } from '../src/errors.js';
import type { Format } from '../src/format/negotiate.js';
import { computeJoin, type BodyFormat, type JoinRequest } from '../src/join/join-compute.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { sha256Hex, snapshotToTable } from '../src/store/snapshot-to-table.js';
import type { Table as PitTable } from '../src/store/table.js';
import { fromArrow, type Json } from './support/format-cells.js';
import { randomAsOf, isoDate } from './support/random-query.js';
import { FLOOR_DATE, Rng, dayOf, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { formatTimestamp, parseAsOfNs, referenceAnswer, type JsonValue } from './support/reference-model.js';
import { eventsArrow, type JoinEvent } from './support/join-events.js';

const SEED = Number(process.env.PITCACHE_DIFF_SEED ?? 20_261_131);
/** joins per snapshot (a mutation run of join/ may ask fewer) */
const QUERIES = Number(process.env.PITCACHE_JOIN_QUERIES ?? 12);
const NOW_MS = Date.UTC(2026, 10, 20, 12, 0, 0);
const NS_PER_DAY = 86_400_000_000_000n;
const TARGETS = [
  ['gbsi_eu', 'system_stress'],
  ['gbsi_us', 'storage_surprise'],
  ['glmi', 'marginality'],
  ['gbsi_us', 'system_stress'],
] as const;

type Row = Record<string, JsonValue>;

interface Loaded {
  readonly snap: GeneratedSnapshot;
  readonly table: PitTable;
}

function load(snap: GeneratedSnapshot): Loaded {
  const bytes = buildArrowSnapshot(snap.spec, 'file');
  const product = findProduct(snap.productId)!;
  const table = snapshotToTable([bytes], {
    parts: [{ object: 'x.arrow', sha256: sha256Hex(bytes), rows: snap.rows.length }],
    filterColumns: product.filters.map((f) => f.param).filter((p) => snap.seriesKey.includes(p)),
    floorUs: floorUsOf(product.floor),
  });
  return { snap, table };
}

/** events that found a row, over every snapshot's joins */
let matchedEvents = 0;
const loaded = TARGETS.map(([p, d], i) => load(generateSnapshot((SEED + i * 7919) >>> 0, p, d, { manySeries: i === 1 })));

type Event = JoinEvent;

function randomEvents(rng: Rng, snap: GeneratedSnapshot, n: number): Event[] {
  const stored = [...new Set(snap.rows.map((r) => JSON.stringify(snap.seriesKey.map((k) => r[k] as string))))].map((s) => JSON.parse(s) as string[]);
  return Array.from({ length: n }, (_, i) => ({
    at: rng.chance(0.1) ? rng.pick(['2019-06-30', '2031-12-31T00:00:00Z', isoDate(snap.firstDay - 30)]) : randomAsOf(rng, snap),
    key: stored.length > 0 && rng.chance(0.8) ? rng.pick(stored) : snap.seriesKey.map((k) => rng.pick([...snap.keyPools[k]!, 'NOPE'])),
    id: rng.chance(0.1) ? null : rng.pick(['e1', 'a,b', 'q"uote', 'line\nbreak', 'ünï', '', `id${i}`]),
    n: rng.chance(0.1) ? null : rng.int(-50, 50) / 4,
  }));
}

function bodyOf(format: BodyFormat, snap: GeneratedSnapshot, events: readonly Event[]): Uint8Array {
  if (format === 'csv') {
    const cell = (s: string): string => `"${s.replaceAll('"', '""')}"`;
    const lines = [['at', ...snap.seriesKey, 'id', 'n'].join(',')];
    for (const e of events) lines.push([e.at, ...e.key.map(cell), e.id === null ? '' : cell(e.id), e.n === null ? '' : String(e.n)].join(','));
    return Buffer.from(lines.join(rng0.chance(0.5) ? '\n' : '\r\n') + '\n');
  }
  if (format === 'json') {
    return Buffer.from(JSON.stringify(events.map((e) => ({ at: e.at, ...Object.fromEntries(snap.seriesKey.map((k, i) => [k, e.key[i]])), id: e.id, n: e.n }))));
  }
  return eventsArrow(snap.seriesKey, events);
}
const rng0 = new Rng(SEED);

/**
 * The reference's latest rows at each `at`, per snapshot, kept on globalThis: a mutation run
 * runs this file once per mutant in one process, and the reference (the slow part, and not
 * code under test) answers the same every time.
 */
function referenceCache(snap: GeneratedSnapshot): Map<string, Row[]> {
  const all = ((globalThis as { __pitcacheJoinReference?: Map<number, Map<string, Row[]>> }).__pitcacheJoinReference ??= new Map());
  let m = all.get(snap.seed);
  if (m === undefined) all.set(snap.seed, (m = new Map()));
  return m;
}

function expectedRows(
  snap: GeneratedSnapshot,
  events: readonly Event[],
  format: BodyFormat,
  opts: { maxAge: number | null; beforeFloor: string; projected: readonly string[] | null },
): Row[] {
  const floorEnd = BigInt(dayOf(FLOOR_DATE[snap.productId]!) + 1) * NS_PER_DAY - 1000n;
  const dataColumns = snap.columns
    .map((c) => c.name)
    .filter((n) => !snap.seriesKey.includes(n) && (opts.projected === null || n === 'date' || opts.projected.includes(n)));
  const allowed = snap.productId === 'glmi' ? ['atlantic', 'pacific', 'middle_east'] : null;
  const byAt = referenceCache(snap);
  return events.map((e) => {
    const ns = parseAsOfNs(e.at)!;
    let latest = byAt.get(e.at);
    if (latest === undefined) byAt.set(e.at, (latest = referenceAnswer(snap, { as_of: e.at, latest: 'true' }, NOW_MS).rows as Row[]));
    const before = ns < floorEnd;
    const outside = allowed !== null && snap.seriesKey.includes('basin') && !allowed.includes(e.key[snap.seriesKey.indexOf('basin')]!);
    let match = outside ? undefined : latest.find((r) => snap.seriesKey.every((k, i) => r[k] === e.key[i]));
    if (match !== undefined && opts.beforeFloor === 'skip' && before) match = undefined;
    if (match !== undefined && opts.maxAge !== null) {
      const atDay = Number((ns - (((ns % NS_PER_DAY) + NS_PER_DAY) % NS_PER_DAY)) / NS_PER_DAY);
      if (dayOf(match.date as string) < atDay - opts.maxAge) match = undefined;
    }
    const row: Row = { at: formatTimestamp(ns - (((ns % 1000n) + 1000n) % 1000n), 'us') };
    snap.seriesKey.forEach((k, i) => (row[k] = e.key[i]!));
    row.id = e.id;
    row.n = e.n === null ? null : format === 'csv' ? String(e.n) : e.n;
    for (const c of dataColumns) row[c] = match === undefined ? null : match[c]!;
    row.floor_applied = before;
    return row;
  });
}

function request(snap: GeneratedSnapshot, bodyFormat: BodyFormat, format: Format, over: Partial<JoinRequest> = {}): JoinRequest {
  const product = findProduct(snap.productId)!;
  return {
    bodyFormat,
    format,
    columns: undefined,
    maxAgeDays: null,
    beforeFloor: 'floor',
    product,
    floorUs: floorUsOf(product.floor),
    generation: 7,
    retrievedAtUs: NOW_MS * 1000,
    recordId: 'req_test',
    ...over,
  };
}

function apiError(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('no error thrown');
}

describe.each(loaded.map((l) => [`${l.snap.productId}/${l.snap.dataset} (seed ${l.snap.seed})`, l] as const))('%s', (_name, { snap, table }) => {
  it('every answer row equals the single as_of query of its event, every body and answer format', () => {
    const rng = new Rng(snap.seed ^ 0x1234);
    const dataCols = snap.columns.map((c) => c.name).filter((n) => !snap.seriesKey.includes(n) && n !== 'date');
    let matched = 0;
    for (let q = 0; q < QUERIES; q++) {
      const events = randomEvents(rng, snap, rng.pick([0, 1, 5, rng.int(1, 40), 100]));
      const bodyFormat = (['csv', 'json', 'arrow'] as const)[q % 3]!;
      const maxAge = rng.chance(0.3) ? rng.pick([0, 1, 7, 30]) : null;
      const beforeFloor = rng.pick(['floor', 'skip', 'error'] as const);
      const projected = rng.chance(0.3) ? dataCols.filter(() => rng.chance(0.4)) : null;
      const columns = projected === null ? undefined : projected.length === 0 ? 'date' : projected.join(',');
      const body = bodyOf(bodyFormat, snap, events);
      const context = `join #${q} (${events.length} events, ${bodyFormat}, max_age ${maxAge}, before_floor ${beforeFloor}, columns ${columns})`;
      const floorEnd = BigInt(dayOf(FLOOR_DATE[snap.productId]!) + 1) * NS_PER_DAY - 1000n;
      const firstBefore = events.findIndex((e) => parseAsOfNs(e.at)! < floorEnd);
      const req = (format: Format) => request(snap, bodyFormat, format, { maxAgeDays: maxAge, beforeFloor, columns });
      if (beforeFloor === 'error' && firstBefore >= 0) {
        const e = apiError(() => computeJoin(table, body, req('json')));
        expect(e.code, context).toBe('before_floor');
        expect(e.message, context).toContain(`event ${firstBefore} (at `);
        expect(e.message, context).toContain(FLOOR_DATE[snap.productId]!);
        continue;
      }
      const want = expectedRows(snap, events, bodyFormat, { maxAge, beforeFloor, projected });
      const wantMatched = want.filter((r) => r.date !== null).length;
      matched += wantMatched;
      const j = computeJoin(table, body, req('json'));
      expect({ count: j.count, matched: j.matched, anyBeforeFloor: j.anyBeforeFloor }, context).toEqual({
        count: events.length,
        matched: wantMatched,
        anyBeforeFloor: firstBefore >= 0,
      });
      const env = JSON.parse(Buffer.from(j.body).toString('utf8')) as { count: number; has_more: boolean; data: Row[]; metadata: Record<string, unknown> };
      expect(env.count, context).toBe(events.length);
      expect(env.has_more, context).toBe(false);
      expect(env.metadata, context).toMatchObject({
        total_count: wantMatched,
        generation: 7,
        floor_applied: firstBefore >= 0,
        vintage_floor: FLOOR_DATE[snap.productId],
      });
      for (let i = 0; i < want.length; i++) {
        expect(env.data[i], `${context} row ${i}`).toEqual(want[i]);
        expect(Object.keys(env.data[i]!), `${context} row ${i}`).toEqual(Object.keys(want[i]!));
      }
      const names = want.length > 0 ? Object.keys(want[0]!) : null;
      const csv = parse(Buffer.from(computeJoin(table, body, req('csv')).body).toString('utf8'), { relax_column_count: false }) as string[][];
      if (names !== null) expect(csv[0], context).toEqual(names);
      for (let i = 0; i < want.length; i++)
        expect(csv[i + 1], `${context} csv row ${i}`).toEqual(names!.map((n) => (env.data[i]![n] === null ? '' : String(env.data[i]![n]))));
      const t = tableFromIPC(computeJoin(table, body, req('arrow')).body);
      expect(t.numRows, context).toBe(events.length);
      if (names !== null)
        expect(
          t.schema.fields.map((f) => f.name),
          context,
        ).toEqual(names);
      for (let i = 0; i < want.length; i++)
        for (const f of t.schema.fields) {
          const json = env.data[i]![f.name] as Json;
          if (!isDeepStrictEqual(fromArrow(t.getChild(f.name)!.get(i), String(f.type), json), json))
            expect(fromArrow(t.getChild(f.name)!.get(i), String(f.type), json), `${context} arrow row ${i} ${f.name}`).toEqual(json);
        }
    }
    matchedEvents += matched;
  }, 120_000);
});

it('some events of the joins above found a row', () => expect(matchedEvents).toBeGreaterThan(0));

describe('bad events: 400 invalid_body naming the row (0-based) and the column', () => {
  const { snap, table } = loaded[0]!;
  const dataCol = snap.columns.map((c) => c.name).find((n) => !snap.seriesKey.includes(n) && n !== 'date')!;
  const join = (body: string | Uint8Array, format: BodyFormat) =>
    apiError(() => computeJoin(table, typeof body === 'string' ? Buffer.from(body) : body, request(snap, format, 'json')));
  const arrow = (children: Record<string, Vector>) => tableToIPC(new Table(children), 'stream');
  const at = (n: number) =>
    vectorFromArray(
      Array.from({ length: n }, () => new Date('2026-02-04T12:00:00Z')),
      new TimestampMillisecond(),
    );
  const cases: Array<[string | Uint8Array, BodyFormat, string]> = [
    ['', 'csv', 'the CSV body is empty'],
    ['country\nDE\n', 'csv', 'row 0: column "at"'],
    ['at\n2026-02-04\n', 'csv', 'row 0: column "country"'],
    ['at,country\n2026-02-04,DE\n2026-02-04,\n', 'csv', 'row 1: column "country"'],
    ['at,country\n2026-02-04,DE\n2026-02-04,DE\n,DE\n', 'csv', 'row 2: column "at"'],
    ['at,country\n2026-02-30,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04T10:00:00,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04T10:00:00+0100,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04T24:00:00Z,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04T10:00:00.Z,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04T10:00:00.1234567890Z,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04T10:00:00Zx,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-13-04,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026/02/04,DE\n', 'csv', 'row 0: column "at"'],
    ['at,country\n2026-02-04,DE,extra\n', 'csv', 'row 0: more cells than the header names (2)'],
    ['at,country,id\n2026-02-04,DE\n', 'csv', 'row 0: 2 cells where the header names 3'],
    ['at,country\n"2026-02-04,DE\n', 'csv', 'not closed'],
    ['at,country\n"2026-02-04"x,DE\n', 'csv', 'a quoted CSV cell is followed by more than a comma or a line break'],
    ['at,country\n2026-02-04,D"E\n', 'csv', 'a quote inside an unquoted CSV cell'],
    [`at,country,${dataCol}\n2026-02-04,DE,1\n`, 'csv', `column "${dataCol}" is named like a column of the dataset`],
    ['at,country,floor_applied\n2026-02-04,DE,1\n', 'csv', 'column "floor_applied"'],
    ['at,country,at\n2026-02-04,DE,x\n', 'csv', 'column "at" is given twice'],
    ['{"at":"2026-02-04"}', 'json', 'array of objects'],
    ['[1,2', 'json', 'not JSON'],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, { at: '2026-02-04' }]), 'json', 'row 1: column "country"'],
    [JSON.stringify([{ at: 'yesterday', country: 'DE' }]), 'json', 'row 0: column "at"'],
    [JSON.stringify([{ at: '2026-02-04', country: 7 }]), 'json', 'row 0: column "country" holds a number'],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE', [dataCol]: 'x' }]), 'json', `column "${dataCol}" is named like a column of the dataset`],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, { country: 'DE' }]), 'json', 'row 1: column "at"'],
    [JSON.stringify([{ at: 20260204, country: 'DE' }]), 'json', 'row 0: column "at"'],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, 'x']), 'json', 'row 1: an event must be a JSON object'],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, null]), 'json', 'row 1: an event must be a JSON object'],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, [1]]), 'json', 'row 1: an event must be a JSON object'],
    [
      JSON.stringify([
        { at: '2026-02-04', country: 'DE', qty: 1 },
        { at: '2026-02-04', country: 'DE', qty: 'one' },
      ]),
      'json',
      'row 1: column "qty" holds a string where earlier rows hold numbers',
    ],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE', qty: { n: 1 } }]), 'json', 'row 0: column "qty" holds an object'],
    [JSON.stringify([{ at: '2026-02-04', country: 'DE', qty: [1] }]), 'json', 'row 0: column "qty" holds an array'],
    ['nope', 'arrow', 'not an Arrow IPC stream'],
    [
      arrow({ at: vectorFromArray([new Date('2026-02-04T12:00:00Z'), null], new TimestampMillisecond()), country: vectorFromArray(['DE', 'FR'], new Utf8()) }),
      'arrow',
      'row 1: column "at"',
    ],
    [arrow({ at: at(3), country: vectorFromArray(['DE', 'FR', null], new Utf8()) }), 'arrow', 'row 2: column "country"'],
    [arrow({ at: at(1) }), 'arrow', 'row 0: column "country"'],
    [arrow({ country: vectorFromArray(['DE'], new Utf8()) }), 'arrow', 'row 0: column "at"'],
    [arrow({ at: vectorFromArray(['2026-02-04'], new Utf8()), country: vectorFromArray(['DE'], new Utf8()) }), 'arrow', '"at" must be a Timestamp or a Date32'],
    [arrow({ at: at(1), country: vectorFromArray([7], new Int32()) }), 'arrow', 'column "country" (a series-key column) must be Utf8'],
    [
      arrow({ at: at(1), country: vectorFromArray(['DE'], new Utf8()), [dataCol]: vectorFromArray([1], new Int32()) }),
      'arrow',
      `column "${dataCol}" is named like a column of the dataset`,
    ],
  ];
  it.each(cases.map(([body, format, says]) => [`${format}: ${says}`, body, format, says] as const))('%s', (_name, body, format, says) => {
    const e = join(body, format);
    expect(e.code).toBe('invalid_body');
    expect(e.message).toContain(says);
  });
});
