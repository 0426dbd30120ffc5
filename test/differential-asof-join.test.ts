/**
 * `POST /{product}/{dataset}/asof_join` (contract 15, 16) against the naive reference model,
 * over random snapshots served by the real server over uWS: random events (existing and
 * unknown series, `at` as dates and as instants with offsets, before any data, before the
 * floor, far ahead), every body format (CSV, JSON, Arrow; gzip or not), `max_age`,
 * `columns` and `before_floor`. Every answer row must equal what the single query
 * `GET ?<series key>=<values>&as_of=<at>&latest=true` returns for its series (the
 * reference's answer), with the event's columns first and `floor_applied` last; the csv and
 * arrow answers of the same join must hold the same cells as its json answer.
 *
 * Reproduce a failure with the printed seed: PITCACHE_DIFF_SEED=<seed> npx vitest run test/differential-asof-join.test.ts
 */
import { gzipSync } from 'node:zlib';
import { isDeepStrictEqual } from 'node:util';
import { DateDay, tableFromIPC, vectorFromArray, type Vector } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromArrow, type Json } from './support/format-cells.js';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { isoDate, randomAsOf } from './support/random-query.js';
import { FLOOR_DATE, Rng, dayOf, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { INVENTED_KEYS, writeInventedCatalog } from './support/invented-catalog.js';
import { formatTimestamp, parseAsOfNs, referenceAnswer, type JsonValue } from './support/reference-model.js';
import { eventsArrow, instantsVector, type JoinEvent } from './support/join-events.js';

const BASE_SEED = Number(process.env.PITCACHE_DIFF_SEED ?? 20_261_129);
const JOINS = Number(process.env.PITCACHE_DIFF_QUERIES ?? 12);

const TARGETS = [
  ['gbsi_eu', 'system_stress'],
  ['gbsi_us', 'storage_surprise'],
  ['glmi', 'marginality'],
  ['wrsi', 'forecast_stress'],
  ['gbsi_us', 'system_stress'],
  // contract 13: products of the catalog.json at the source, keys of 2 and 0 columns, every value type
  ['acme_grid', 'load_by_site'],
  ['flatline', 'level'],
] as const;
const snaps = TARGETS.map(([p, d], i) =>
  generateSnapshot((BASE_SEED + i * 7919) >>> 0, p, d, {
    manySeries: i === 1,
    ...(INVENTED_KEYS[p] === undefined ? {} : { seriesKey: INVENTED_KEYS[p], allColumns: true }),
  }),
);

type Row = Record<string, JsonValue>;
type BodyFormat = 'csv' | 'json' | 'arrow';

type Event = JoinEvent;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.spec })), prepare: writeInventedCatalog });
});
afterAll(async () => h?.close());

const NS_PER_DAY = 86_400_000_000_000n;

function floorEndNs(snap: GeneratedSnapshot): bigint {
  // the floor day's last microsecond (stored instants are whole microseconds)
  return BigInt(dayOf(FLOOR_DATE[snap.productId]!) + 1) * NS_PER_DAY - 1000n;
}

function randomEvents(rng: Rng, snap: GeneratedSnapshot, n: number): Event[] {
  const stored = [...new Set(snap.rows.map((r) => JSON.stringify(snap.seriesKey.map((k) => r[k] as string))))].map((s) => JSON.parse(s) as string[]);
  const out: Event[] = [];
  for (let i = 0; i < n; i++) {
    let key: string[];
    if (stored.length > 0 && rng.chance(0.8)) key = rng.pick(stored);
    else key = snap.seriesKey.map((k) => rng.pick([...snap.keyPools[k]!, 'NOPE']));
    const at = rng.chance(0.1) ? rng.pick(['2019-06-30', '2031-12-31T00:00:00Z', isoDate(snap.firstDay - 30)]) : randomAsOf(rng, snap);
    out.push({
      at,
      key,
      id: rng.chance(0.1) ? null : rng.pick(['e1', 'a,b', 'q"uote', 'line\nbreak', 'ünï', '', `id${i}`]),
      n: rng.chance(0.1) ? null : rng.int(-50, 50) / 4,
    });
  }
  return out;
}

function csvCell(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

function bodyOf(format: BodyFormat, snap: GeneratedSnapshot, events: readonly Event[]): { body: Uint8Array; type: string } {
  const names = ['at', ...snap.seriesKey, 'id', 'n'];
  if (format === 'csv') {
    const lines = [names.join(',')];
    // every text cell quoted (an empty key value is "", not null); a null passthrough cell is empty
    for (const e of events) lines.push([e.at, ...e.key.map(csvCell), e.id === null ? '' : csvCell(e.id), e.n === null ? '' : String(e.n)].join(','));
    return { body: Buffer.from(lines.join('\n') + '\n'), type: 'text/csv' };
  }
  if (format === 'json') {
    const objects = events.map((e) => ({ at: e.at, ...Object.fromEntries(snap.seriesKey.map((k, i) => [k, e.key[i]])), id: e.id, n: e.n }));
    return { body: Buffer.from(JSON.stringify(objects)), type: 'application/json' };
  }
  // Arrow: `at` as a Timestamp µs (instants) or a Date32 (when every event's at is a date)
  const allDates = events.every((e) => /^\d{4}-\d{2}-\d{2}$/.test(e.at));
  const atVector: Vector = allDates
    ? vectorFromArray(
        events.map((e) => new Date(`${e.at}T00:00:00Z`)),
        new DateDay(),
      )
    : instantsVector(events);
  return { body: eventsArrow(snap.seriesKey, events, atVector), type: 'application/vnd.apache.arrow.stream' };
}

/** The expected answer row of each event: the reference's latest row of its series at `at`, nulls where none. */
function expectedRows(
  snap: GeneratedSnapshot,
  events: readonly Event[],
  format: BodyFormat,
  opts: { maxAge: number | null; beforeFloor: string | undefined; projected: readonly string[] | null },
): Row[] {
  const byAt = new Map<string, Row[]>();
  const floorEnd = floorEndNs(snap);
  const dataColumns = snap.columns
    .map((c) => c.name)
    .filter((n) => !snap.seriesKey.includes(n) && (opts.projected === null || n === 'date' || opts.projected.includes(n)));
  const allowed = snap.productId === 'glmi' ? ['atlantic', 'pacific', 'middle_east'] : null;
  return events.map((e) => {
    const ns = parseAsOfNs(e.at)!;
    let latest = byAt.get(e.at);
    if (latest === undefined) {
      latest = referenceAnswer(snap, { as_of: e.at, latest: 'true' }, h.clock.now()).rows as Row[];
      byAt.set(e.at, latest);
    }
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

async function post(snap: GeneratedSnapshot, query: string, body: Uint8Array, type: string, gzip: boolean, answer: string): Promise<Response> {
  return fetch(`${h.url}/${snap.productId}/${snap.dataset}/asof_join?${query}${query === '' ? '' : '&'}format=${answer}`, {
    method: 'POST',
    body: gzip ? gzipSync(body) : body,
    headers: { 'x-api-key': TEST_KEY, 'content-type': type, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
  });
}

function csvText(v: JsonValue): string {
  return v === null ? '' : typeof v === 'string' ? v : String(v);
}

describe.each(snaps.map((s) => [`${s.productId}/${s.dataset} (seed ${s.seed}, key [${s.seriesKey.join(',')}])`, s] as const))('%s', (_name, snap) => {
  it('every answer row equals the single as_of query of its event, every body and answer format', async () => {
    const rng = new Rng(snap.seed ^ 0xa5a5);
    const failures: string[] = [];
    let matched = 0;
    for (let q = 0; q < JOINS && failures.length < 2; q++) {
      const events = randomEvents(rng, snap, rng.pick([0, 1, 5, rng.int(1, 60), 200]));
      const format = rng.pick(['csv', 'json', 'arrow'] as const);
      const gzip = rng.chance(0.3);
      const maxAge = rng.chance(0.3) ? rng.pick([0, 1, 7, 30]) : null;
      const beforeFloor = rng.pick([undefined, 'floor', 'skip', 'error'] as const);
      const dataCols = snap.columns.map((c) => c.name).filter((n) => !snap.seriesKey.includes(n) && n !== 'date');
      const projected = rng.chance(0.3) ? dataCols.filter(() => rng.chance(0.4)) : null;
      const params = [
        ...(maxAge === null ? [] : [`max_age=${maxAge}`]),
        ...(beforeFloor === undefined ? [] : [`before_floor=${beforeFloor}`]),
        ...(projected === null ? [] : [`columns=${projected.length === 0 ? 'date' : projected.map(encodeURIComponent).join(',')}`]),
      ];
      const query = rng.shuffle(params).join('&');
      const { body, type } = bodyOf(format, snap, events);
      const context = `PITCACHE_DIFF_SEED=${BASE_SEED} join #${q} (${events.length} events, ${format}${gzip ? '+gzip' : ''} body, ?${query})`;
      const anyBefore = events.some((e) => parseAsOfNs(e.at)! < floorEndNs(snap));
      const jr = await post(snap, query, body, type, gzip, 'json');
      if (beforeFloor === 'error' && anyBefore) {
        const b = (await jr.json()) as { error?: { code?: string; message?: string } };
        if (jr.status !== 400 || b.error?.code !== 'before_floor' || !String(b.error.message).includes(FLOOR_DATE[snap.productId]!))
          failures.push(`${context}: expected 400 before_floor naming the floor, got ${jr.status} ${JSON.stringify(b)}`);
        continue;
      }
      if (jr.status !== 200) {
        failures.push(`${context}: status ${jr.status}: ${(await jr.text()).slice(0, 400)}`);
        continue;
      }
      const env = (await jr.json()) as { count: number; has_more: boolean; data: Row[]; metadata: { total_count: number; floor_applied: boolean } };
      const want = expectedRows(snap, events, format, { maxAge, beforeFloor, projected });
      const wantMatched = want.filter((r) => r.date !== null).length;
      matched += wantMatched;
      const checks: Array<[string, unknown, unknown]> = [
        ['count', env.count, events.length],
        ['has_more', env.has_more, false],
        ['metadata.total_count', env.metadata.total_count, wantMatched],
        ['x-floor-applied', jr.headers.get('x-floor-applied'), String(anyBefore)],
        ['x-count', jr.headers.get('x-count'), String(events.length)],
      ];
      for (const [what, actual, expected] of checks)
        if (!isDeepStrictEqual(actual, expected)) failures.push(`${context}: ${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      for (let i = 0; i < want.length; i++) {
        if (!isDeepStrictEqual(env.data[i], want[i]) || !isDeepStrictEqual(Object.keys(env.data[i] ?? {}), Object.keys(want[i]!))) {
          failures.push(
            `${context}: row ${i} (event ${JSON.stringify(events[i])})\n    expected ${JSON.stringify(want[i])}\n    actual   ${JSON.stringify(env.data[i])}`,
          );
          break;
        }
      }
      // the same join answered as csv and as arrow: the same cells
      const cr = await post(snap, query, body, type, gzip, 'csv');
      const records = parse(await cr.text(), { relax_column_count: false }) as string[][];
      const names = want.length > 0 ? Object.keys(want[0]!) : null;
      if (names !== null && !isDeepStrictEqual(records[0], names))
        failures.push(`${context}: csv header ${JSON.stringify(records[0])}, expected ${JSON.stringify(names)}`);
      for (let i = 0; i < want.length; i++) {
        const expected = names!.map((n) => csvText(env.data[i]![n]!));
        if (!isDeepStrictEqual(records[i + 1], expected)) {
          failures.push(`${context}: csv row ${i} ${JSON.stringify(records[i + 1])}, expected ${JSON.stringify(expected)}`);
          break;
        }
      }
      const ar = await post(snap, query, body, type, gzip, 'arrow');
      const t = tableFromIPC(new Uint8Array(await ar.arrayBuffer()));
      if (t.numRows !== events.length) failures.push(`${context}: arrow has ${t.numRows} rows`);
      if (
        names !== null &&
        !isDeepStrictEqual(
          t.schema.fields.map((f) => f.name),
          names,
        )
      )
        failures.push(`${context}: arrow columns ${JSON.stringify(t.schema.fields.map((f) => f.name))}`);
      if (events.length > 0) {
        const atType = String(t.schema.fields.find((f) => f.name === 'at')?.type);
        if (atType !== 'Timestamp<MICROSECOND, UTC>') failures.push(`${context}: arrow at is ${atType}`);
        const fa = t.getChild('floor_applied')!;
        const dates = t.getChild('date')!;
        for (let i = 0; i < want.length; i++) {
          const d = dates.get(i) as number | null;
          const gotDate = d === null ? null : new Date(d).toISOString().slice(0, 10);
          if (fa.get(i) !== want[i]!.floor_applied || gotDate !== want[i]!.date) {
            failures.push(`${context}: arrow row ${i}: floor_applied ${String(fa.get(i))}, date ${gotDate}; expected ${JSON.stringify(want[i])}`);
            break;
          }
        }
        // every other cell: what apache-arrow reads equals the JSON answer's cell (itself checked against the reference)
        outer: for (let i = 0; i < want.length; i++) {
          for (const f of t.schema.fields) {
            const json = env.data[i]![f.name] as Json;
            const got = fromArrow(t.getChild(f.name)!.get(i), String(f.type), json);
            if (!isDeepStrictEqual(got, json)) {
              failures.push(`${context}: arrow row ${i} column ${f.name}: ${JSON.stringify(got)}, the json answer ${JSON.stringify(json)}`);
              break outer;
            }
          }
        }
      }
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
    expect(matched, 'some events found a row').toBeGreaterThan(0);
  }, 180_000);
});
