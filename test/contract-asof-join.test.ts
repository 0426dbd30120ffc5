/**
 * Contract 15: `POST /{product}/{dataset}/asof_join`, its limits and every kind of bad
 * input, over uWS, on the hand-written history of support/history-fixture.ts (gbsi_eu,
 * floor 2026-01-13, key `country`). The answers themselves are checked against the
 * reference model in differential-asof-join.test.ts.
 */
import { gzipSync } from 'node:zlib';
import { Int32, Table, TimestampMillisecond, Utf8, tableFromArrays, tableToIPC, vectorFromArray, type Vector } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EU_KEY, TEST_KEY, type Harness } from './support/harness.js';
import { expectError } from './support/fixtures.js';
import { HISTORY_PATH } from './support/history-fixture.js';
import { JOIN, joinPost, startJoinHarness } from './support/asof-join-harness.js';

describe('contract 15: asof_join', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startJoinHarness();
  });
  afterAll(() => h.close());

  const post = (...args: Parameters<ReturnType<typeof joinPost>>) => joinPost(h)(...args);

  it('one row per event in the events order: the event columns as given, the dataset columns but the key, floor_applied', async () => {
    const r = await post('id,at,country\nx,2026-02-04T23:59:59.999999Z,DE\ny,2026-02-03,DE\nz,2026-02-03,FR\n', 'text/csv', 'columns=tag');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([
      { id: 'x', at: '2026-02-04T23:59:59.999999Z', country: 'DE', date: '2026-02-02', tag: 'DE02-v2', floor_applied: false },
      { id: 'y', at: '2026-02-03T23:59:59.999999Z', country: 'DE', date: '2026-02-02', tag: 'DE02-v1', floor_applied: false },
      { id: 'z', at: '2026-02-03T23:59:59.999999Z', country: 'FR', date: '2026-02-02', tag: 'FR02', floor_applied: false },
    ]);
    expect(r.body.count).toBe(3);
    expect(r.body.has_more).toBe(false);
    expect(r.body.metadata.total_count).toBe(3);
    expect(r.headers.get('x-floor-applied')).toBe('false');
  });

  it('an empty series key: every event joins the one series', async () => {
    const r = await post('at\n2026-02-04\n', 'text/csv', 'columns=tag', {}, TEST_KEY, '/gbsi_us/system_stress/asof_join');
    // gbsi_us's floor is 2026-03-02: the answer is the state held at the floor
    expect(r.body.data, r.text).toEqual([{ at: '2026-02-04T23:59:59.999999Z', date: '2026-02-04', tag: 'FR04-b', floor_applied: true }]);
  });

  it('before the floor: floor_applied and x-floor-applied; before_floor=skip nulls, error a 400 naming the floor', async () => {
    const body = 'at,country\n2026-01-07,DE\n2026-01-13,DE\n';
    const floor = await post(body, 'text/csv', 'columns=tag');
    expect(floor.body.data.map((r: Record<string, unknown>) => [r.tag, r.floor_applied])).toEqual([
      ['DE05-floor', true],
      ['DE05-floor', false],
    ]);
    expect(floor.headers.get('x-floor-applied')).toBe('true');
    const skip = await post(body, 'text/csv', 'columns=tag&before_floor=skip');
    expect(skip.body.data.map((r: Record<string, unknown>) => [r.tag, r.floor_applied])).toEqual([
      [null, true],
      ['DE05-floor', false],
    ]);
    expect(skip.headers.get('x-floor-applied')).toBe('true');
    const error = await post(body, 'text/csv', 'before_floor=error');
    expectError(error, 400, 'before_floor', undefined);
    expect(error.body.error.message).toContain('2026-01-13');
    expect(error.body.error.message).toContain('event 0');
  });

  it('max_age: a row dated more than max_age days before the date of at is no answer', async () => {
    const body = 'at,country\n2026-02-05T10:00:00+02:00,FR\n';
    const tag = async (q: string) => (await post(body, 'text/csv', `columns=tag&${q}`)).body.data[0].tag;
    expect(await tag('max_age=3')).toBe('FR04-b');
    expect(await tag('max_age=1')).toBe('FR04-b');
    expect(await tag('max_age=0')).toBe(null);
  });

  it('bodies: JSON (values as given) and Arrow (types kept), gzip accepted', async () => {
    const json = JSON.stringify([{ at: '2026-02-04', country: 'DE', qty: 3, ok: true, note: 'n' }]);
    const j = await post(json, 'application/json', 'columns=tag');
    expect(j.body.data).toEqual([
      { at: '2026-02-04T23:59:59.999999Z', country: 'DE', qty: 3, ok: true, note: 'n', date: '2026-02-02', tag: 'DE02-v2', floor_applied: false },
    ]);
    const gz = await post(gzipSync(Buffer.from(json)), 'application/json', 'columns=tag', { 'content-encoding': 'gzip' });
    expect(gz.body.data).toEqual(j.body.data);
    const arrow = tableToIPC(
      new Table({
        at: vectorFromArray([new Date('2026-02-04T12:00:00Z')], new TimestampMillisecond()),
        country: vectorFromArray(['DE'], new Utf8()),
        qty: vectorFromArray([7], new Int32()),
      }),
      'stream',
    );
    const a = await post(arrow, 'application/vnd.apache.arrow.stream', 'columns=tag');
    expect(a.status, a.text).toBe(200);
    expect(a.body.data[0]).toMatchObject({ at: '2026-02-04T12:00:00.000000Z', country: 'DE', qty: 7, tag: 'DE02-v1' });
  });

  it('a row without at or a series-key value, or with a bad at: 400 naming the row (0-based) and the column', async () => {
    const cases: Array<[string, string, string]> = [
      ['country\nDE\n', 'text/csv', 'row 0: column "at"'],
      ['at\n2026-02-04\n', 'text/csv', 'row 0: column "country"'],
      ['at,country\n2026-02-04,DE\n2026-02-04,\n', 'text/csv', 'row 1: column "country"'],
      ['at,country\n2026-02-04,DE\n2026-02-04,DE\n,DE\n', 'text/csv', 'row 2: column "at"'],
      ['at,country\n2026-02-30,DE\n', 'text/csv', 'row 0: column "at"'],
      ['at,country\n2026-02-04T10:00:00,DE\n', 'text/csv', 'row 0: column "at"'],
      [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, { at: '2026-02-04' }]), 'application/json', 'row 1: column "country"'],
      [JSON.stringify([{ at: 'yesterday', country: 'DE' }]), 'application/json', 'row 0: column "at"'],
      [JSON.stringify([{ at: '2026-02-04', country: 7 }]), 'application/json', 'row 0: column "country"'],
    ];
    for (const [body, type, says] of cases) {
      const r = await post(body, type);
      expectError(r, 400, 'invalid_body', undefined);
      expect(r.body.error.message, body).toContain(says);
    }
  });

  it('other bad bodies: a passthrough column named like a dataset column, not JSON, not Arrow, bad gzip, a broken CSV', async () => {
    const cases: Array<[string | Uint8Array, string, Record<string, string>, string]> = [
      ['at,country,value\n2026-02-04,DE,1\n', 'text/csv', {}, 'column "value" is named like a column of the dataset'],
      ['at,country,floor_applied\n2026-02-04,DE,1\n', 'text/csv', {}, 'column "floor_applied"'],
      ['at,country,at\n2026-02-04,DE,x\n', 'text/csv', {}, 'given twice'],
      ['at,country\n2026-02-04,DE,extra\n', 'text/csv', {}, 'row 0'],
      ['at,country\n"2026-02-04,DE\n', 'text/csv', {}, 'not closed'],
      ['{"at":"2026-02-04"}', 'application/json', {}, 'array of objects'],
      ['[1,2', 'application/json', {}, 'not JSON'],
      ['nope', 'application/vnd.apache.arrow.stream', {}, 'not an Arrow IPC stream'],
      ['at,country\n', 'text/csv', { 'content-encoding': 'gzip' }, 'not gzip'],
    ];
    for (const [body, type, headers, says] of cases) {
      const r = await post(body, type, '', headers);
      expectError(r, 400, 'invalid_body', undefined);
      expect(r.body.error.message, String(body)).toContain(says);
    }
    const atAsText = tableToIPC(tableFromArrays({ at: ['2026-02-04'], country: ['DE'] }), 'stream');
    const r = await post(atAsText, 'application/vnd.apache.arrow.stream');
    expectError(r, 400, 'invalid_body', undefined);
    expect(r.body.error.message).toContain('"at" must be a Timestamp or a Date32');
  });

  it('Arrow and JSON bodies: a missing or null at or key, a bad type, a passthrough named like a dataset column: 400 naming the row and column', async () => {
    const arrow = (children: Record<string, Vector>) => tableToIPC(new Table(children), 'stream');
    const at = (n: number) =>
      vectorFromArray(
        Array.from({ length: n }, () => new Date('2026-02-04T12:00:00Z')),
        new TimestampMillisecond(),
      );
    const cases: Array<[string | Uint8Array, string, string]> = [
      [
        arrow({
          at: vectorFromArray([new Date('2026-02-04T12:00:00Z'), null], new TimestampMillisecond()),
          country: vectorFromArray(['DE', 'FR'], new Utf8()),
        }),
        'arrow',
        'row 1: column "at"',
      ],
      [arrow({ at: at(3), country: vectorFromArray(['DE', 'FR', null], new Utf8()) }), 'arrow', 'row 2: column "country"'],
      [arrow({ at: at(1) }), 'arrow', 'row 0: column "country"'],
      [arrow({ country: vectorFromArray(['DE'], new Utf8()) }), 'arrow', 'row 0: column "at"'],
      [arrow({ at: at(1), country: vectorFromArray([7], new Int32()) }), 'arrow', 'column "country" (a series-key column) must be Utf8'],
      [
        arrow({ at: at(1), country: vectorFromArray(['DE'], new Utf8()), value: vectorFromArray([1], new Int32()) }),
        'arrow',
        'column "value" is named like a column of the dataset',
      ],
      [JSON.stringify([{ at: '2026-02-04', country: 'DE', tag: 'x' }]), 'json', 'column "tag" is named like a column of the dataset'],
      [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, { country: 'DE' }]), 'json', 'row 1: column "at"'],
      [
        JSON.stringify([
          { at: '2026-02-04', country: 'DE' },
          { at: null, country: 'DE' },
        ]),
        'json',
        'row 1: column "at"',
      ],
      [JSON.stringify([{ at: 20260204, country: 'DE' }]), 'json', 'row 0: column "at"'],
      [JSON.stringify([{ at: '2026-02-04', country: 'DE' }, 'x']), 'json', 'row 1: an event must be a JSON object'],
      [
        JSON.stringify([
          { at: '2026-02-04', country: 'DE', qty: 1 },
          { at: '2026-02-04', country: 'DE', qty: 'one' },
        ]),
        'json',
        'row 1: column "qty"',
      ],
      [JSON.stringify([{ at: '2026-02-04', country: 'DE', qty: { n: 1 } }]), 'json', 'row 0: column "qty" holds an object'],
    ];
    const types = { arrow: 'application/vnd.apache.arrow.stream', json: 'application/json' } as const;
    for (const [body, kind, says] of cases) {
      const r = await post(body, types[kind as keyof typeof types]);
      expectError(r, 400, 'invalid_body', undefined);
      expect(r.body.error.message, `${kind}: ${says}`).toContain(says);
    }
  });

  it('415 for a body type or encoding it cannot read', async () => {
    expectError(await post('at,country\n', 'text/plain'), 415, 'unsupported_media_type', undefined);
    expectError(await post('at,country\n', 'text/csv', '', { 'content-encoding': 'br' }), 415, 'unsupported_media_type', undefined);
  });

  it('parameters: columns, format, max_age, before_floor and generation only; bounds are 400s naming them', async () => {
    const body = 'at,country\n2026-02-04,DE\n';
    for (const p of ['country=DE', 'limit=5', 'as_of=2026-02-04', 'cursor=x'])
      expectError(await post(body, 'text/csv', p), 400, 'unknown_parameter', p.split('=')[0]);
    for (const v of ['-1', '36601', 'x']) expectError(await post(body, 'text/csv', `max_age=${v}`), 400, 'invalid_parameter', 'max_age');
    expectError(await post(body, 'text/csv', 'before_floor=maybe'), 400, 'invalid_parameter', 'before_floor');
    expectError(await post(body, 'text/csv', 'columns=nope'), 400, 'invalid_parameter', 'columns');
    expectError(await post(body, 'text/csv', 'format=xml'), 400, 'invalid_parameter', 'format');
    expectError(await post(body, 'text/csv', 'generation=99'), 400, 'generation_unavailable', 'generation');
    expect((await post(body, 'text/csv', 'generation=1')).status).toBe(200);
  });

  it('keys, paths and methods: 401, 403, 404; asof_join is POST only (405 Allow: POST), the other data paths stay GET and HEAD', async () => {
    const body = 'at,country\n2026-02-04,DE\n';
    expectError(await post(body, 'text/csv', '', {}, null), 401, 'unauthorized', undefined);
    expectError(await post(body, 'text/csv', '', {}, EU_KEY, '/gbsi_us/system_stress/asof_join'), 403, 'forbidden', undefined);
    expectError(await post(body, 'text/csv', '', {}, TEST_KEY, '/gbsi_eu/nope/asof_join'), 404, 'not_found', undefined);
    const get = await h.get(JOIN);
    expectError(get, 405, 'method_not_allowed', undefined);
    expect(get.headers.get('allow')).toBe('POST');
    const postRows = await post(body, 'text/csv', '', {}, TEST_KEY, HISTORY_PATH);
    expectError(postRows, 405, 'method_not_allowed', undefined);
    expect(postRows.headers.get('allow')).toBe('GET, HEAD');
  });
});
