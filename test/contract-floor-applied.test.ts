/**
 * Contract 16: look-ahead made visible. On the hand-written history of
 * support/history-fixture.ts (gbsi_eu, vintage floor 2026-01-13: its end, F, is
 * 2026-01-13T23:59:59.999999Z), over uWS, read back with apache-arrow and csv-parse.
 */
import { tableFromIPC } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf } from './support/fixtures.js';
import { HISTORY_PATH, HISTORY_ROWS } from './support/history-fixture.js';

const WF = `${HISTORY_PATH}/walk_forward`;

describe('contract 16: look-ahead made visible', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ datasets: [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], HISTORY_ROWS) }] });
  });
  afterAll(() => h.close());

  it('x-floor-applied on every data answer: true exactly when as_of lies strictly before the end of the floor day', async () => {
    const cases: Array<[string, string]> = [
      ['', 'false'],
      ['as_of=2026-01-12', 'true'],
      // the floor date itself is its end: not before it
      ['as_of=2026-01-13', 'false'],
      ['as_of=2026-01-13T23%3A59%3A59.999998Z', 'true'],
      ['as_of=2026-01-13T23%3A59%3A59.999999Z', 'false'],
      ['as_of=2026-01-14T00%3A59%3A59%2B01%3A00', 'true'],
      ['as_of=2026-03-01', 'false'],
    ];
    for (const [q, want] of cases) {
      for (const format of ['json', 'csv', 'arrow']) {
        const r = await h.get(`${HISTORY_PATH}?${q}&format=${format}`);
        expect(r.status, q).toBe(200);
        expect(r.headers.get('x-floor-applied'), `${q} ${format}`).toBe(want);
      }
      const vintages = await h.get(`${HISTORY_PATH}/vintages?${q}`);
      expect(vintages.headers.get('x-floor-applied'), `vintages ${q}`).toBe(want);
      const head = await h.get(`${HISTORY_PATH}?${q}`, undefined, { method: 'HEAD' });
      expect(head.headers.get('x-floor-applied'), `HEAD ${q}`).toBe(want);
    }
    // the JSON envelope says the same
    expect((await h.get(`${HISTORY_PATH}?as_of=2026-01-12`)).body.metadata.floor_applied).toBe(true);
  });

  it('walk_forward: x-floor-applied when any decision date lies before the floor, whatever before_floor says', async () => {
    for (const bf of ['', '&before_floor=floor', '&before_floor=skip']) {
      expect((await h.get(`${WF}?decision_from=2026-01-12&decision_to=2026-01-20${bf}`)).headers.get('x-floor-applied'), bf).toBe('true');
      expect((await h.get(`${WF}?decision_from=2026-01-13&decision_to=2026-01-20${bf}`)).headers.get('x-floor-applied'), bf).toBe('false');
    }
  });

  /** `decision_date country date tag floor_applied` of each row. */
  const line = (r: Record<string, unknown>): string =>
    `${String(r.decision_date)} ${String(r.country)} ${String(r.date)} ${String(r.tag)} ${String(r.floor_applied)}`;

  it('walk_forward rows end with floor_applied (Bool): true for the decision dates before the floor, in json, csv and arrow', async () => {
    const q = 'decision_from=2026-01-11&decision_to=2026-01-15&window=30&columns=tag';
    const want = [
      '2026-01-11 DE 2026-01-05 DE05-floor true',
      '2026-01-12 DE 2026-01-05 DE05-floor true',
      '2026-01-13 DE 2026-01-05 DE05-floor false',
      '2026-01-14 DE 2026-01-05 DE05-floor false',
      '2026-01-15 DE 2026-01-05 DE05-floor false',
    ];
    const json = await h.get(`${WF}?${q}`);
    expect(Object.keys(json.body.data[0])).toEqual(['decision_date', 'date', 'country', 'tag', 'floor_applied']);
    expect(rowsOf(json).map(line)).toEqual(want);

    const csv = await h.get(`${WF}?${q}&format=csv`);
    const records = parse(csv.text, { columns: true }) as Array<Record<string, string>>;
    expect(csv.text.split('\n')[0]).toBe('decision_date,date,country,tag,floor_applied');
    expect(records.map(line)).toEqual(want);

    const res = await fetch(`${h.url}${WF}?${q}&format=arrow`, { headers: { 'x-api-key': 'test-key-all-products' } });
    const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    expect(table.schema.fields.map((f) => f.name)).toEqual(['decision_date', 'date', 'country', 'tag', 'floor_applied']);
    expect(String(table.schema.fields.at(-1)!.type)).toBe('Bool');
    const arrowLines = table.toArray().map((r: { toJSON(): Record<string, unknown> }) => {
      const o = r.toJSON();
      return line({
        ...o,
        decision_date: new Date(o.decision_date as number).toISOString().slice(0, 10),
        date: new Date(o.date as number).toISOString().slice(0, 10),
      });
    });
    expect(arrowLines).toEqual(want);
  });

  it('before_floor=skip: decision dates before the floor give no rows (and are not counted); floor is the default', async () => {
    const q = 'decision_from=2026-01-11&decision_to=2026-01-15&window=30&columns=tag';
    const skip = await h.get(`${WF}?${q}&before_floor=skip`);
    expect(rowsOf(skip).map(line)).toEqual([
      '2026-01-13 DE 2026-01-05 DE05-floor false',
      '2026-01-14 DE 2026-01-05 DE05-floor false',
      '2026-01-15 DE 2026-01-05 DE05-floor false',
    ]);
    expect(skip.body.metadata.total_count).toBe(3);
    expect(rowsOf(await h.get(`${WF}?${q}&before_floor=floor`))).toEqual(rowsOf(await h.get(`${WF}?${q}`)));
    // step 2 from 01-10: 01-10 and 01-12 skipped, 01-14 answered
    expect(rowsOf(await h.get(`${WF}?decision_from=2026-01-10&decision_to=2026-01-15&step=2&window=30&columns=tag&before_floor=skip`)).map(line)).toEqual([
      '2026-01-14 DE 2026-01-05 DE05-floor false',
    ]);
    // every decision date before the floor: an empty answer, not an error
    const none = await h.get(`${WF}?decision_from=2026-01-01&decision_to=2026-01-12&before_floor=skip`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    expect(none.headers.get('x-floor-applied')).toBe('true');
    // a cursor chain under skip
    const first = await h.get(`${WF}?${q}&before_floor=skip&limit=2`);
    const rest = await h.get(`${WF}?${q}&before_floor=skip&limit=2&cursor=${first.body.next_cursor as string}`);
    expect([...rowsOf(first), ...rowsOf(rest)].map(line)).toEqual(rowsOf(skip).map(line));
    // before_floor is part of the cursor's query
    expectError(await h.get(`${WF}?${q}&limit=2&cursor=${first.body.next_cursor as string}`), 400, 'invalid_cursor', 'cursor');
  });

  it('before_floor=error: 400 before_floor naming the floor when any decision date lies before it', async () => {
    const r = await h.get(`${WF}?decision_from=2026-01-12&decision_to=2026-01-20&before_floor=error`);
    expectError(r, 400, 'before_floor', 'decision_from');
    expect(r.body.error.message).toContain('2026-01-13');
    expect((await h.get(`${WF}?decision_from=2026-01-13&decision_to=2026-01-20&before_floor=error`)).status).toBe(200);
    expectError(await h.get(`${WF}?decision_from=2026-01-13&decision_to=2026-01-20&before_floor=later`), 400, 'invalid_parameter', 'before_floor');
    expectError(await h.get(`${HISTORY_PATH}?before_floor=skip`), 400, 'unknown_parameter', 'before_floor');
  });
});
