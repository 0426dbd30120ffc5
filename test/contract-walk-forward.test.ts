/**
 * Contract 10: `GET /{product}/{dataset}/walk_forward`, on the hand-written history of
 * support/history-fixture.ts (read it first: every expectation below follows from it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ADMIN_KEY, EU_KEY, startInProcessHarness, type Harness, type Reply } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf } from './support/fixtures.js';
import { HISTORY_PATH, HISTORY_ROWS } from './support/history-fixture.js';

const WF = `${HISTORY_PATH}/walk_forward`;

describe('contract 10: walk_forward', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], HISTORY_ROWS) },
        // the same rows under other tags in another product: walk_forward must not mix datasets
        {
          productId: 'pemi',
          dataset: 'grid_stress',
          spec: pitSnapshot(
            ['bidding_zone'],
            HISTORY_ROWS.map((r) => ({ ...r, key: { bidding_zone: r.key!.country! }, tag: `other-${r.tag}` })),
          ),
        },
      ],
    });
  });
  afterAll(() => h.close());

  /** `decision_date date country tag` of every row. */
  async function lines(query: string): Promise<string[]> {
    return rowsOf(await h.get(`${WF}?${query}`)).map((r) => `${String(r.decision_date)} ${String(r.date)} ${String(r.country)} ${String(r.tag)}`);
  }

  it('each decision date D holds the rows of date_from=D-window&date_to=D&as_of=D, decision_date first', async () => {
    expect(await lines('decision_from=2026-02-01&decision_to=2026-02-06&window=2')).toEqual([
      // 02-01: nothing is dated in [01-30, 02-01]
      '2026-02-02 2026-02-02 DE DE02-v1',
      '2026-02-02 2026-02-02 FR FR02',
      // 02-03: DE 02-03 is not observed yet
      '2026-02-03 2026-02-02 DE DE02-v1',
      '2026-02-03 2026-02-02 FR FR02',
      // 02-04: the revision observed at 23:59:59.999999 is known at the end of the day; the full tie goes to the later row
      '2026-02-04 2026-02-02 DE DE02-v2',
      '2026-02-04 2026-02-02 FR FR02',
      '2026-02-04 2026-02-04 FR FR04-b',
      // 02-05: 02-02 left the window
      '2026-02-05 2026-02-03 DE DE03',
      '2026-02-05 2026-02-04 FR FR04-b',
      '2026-02-06 2026-02-04 FR FR04-b',
    ]);
    const r = await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-06&window=2`);
    expect(Object.keys(r.body.data[0])).toEqual([
      'decision_date',
      'date',
      'str_effective_at',
      'str_observed_at',
      'str_ingested_at',
      'model_version',
      'country',
      'value',
      'tag',
      'floor_applied',
    ]);
    // And it is, decision by decision, what the single-date query answers.
    for (let d = 1; d <= 6; d++) {
      const D = `2026-02-0${d}`;
      const from = new Date(Date.parse(`${D}T00:00:00Z`) - 2 * 86_400_000).toISOString().slice(0, 10);
      const single = rowsOf(await h.get(`${HISTORY_PATH}?date_from=${from}&date_to=${D}&as_of=${D}`));
      const fromWalk = (r.body.data as Array<Record<string, unknown>>)
        .filter((row) => row.decision_date === D)
        .map(({ decision_date: _d, floor_applied: _f, ...rest }) => rest);
      expect(fromWalk, D).toEqual(single);
    }
  });

  it('step and window: decision dates from decision_from by step while <= decision_to; window 0 is the decision date alone', async () => {
    expect(await lines('decision_from=2026-02-01&decision_to=2026-02-06&window=2&step=2')).toEqual([
      '2026-02-03 2026-02-02 DE DE02-v1',
      '2026-02-03 2026-02-02 FR FR02',
      '2026-02-05 2026-02-03 DE DE03',
      '2026-02-05 2026-02-04 FR FR04-b',
    ]);
    expect(await lines('decision_from=2026-02-02&decision_to=2026-02-05&window=0')).toEqual([
      '2026-02-02 2026-02-02 DE DE02-v1',
      '2026-02-02 2026-02-02 FR FR02',
      '2026-02-04 2026-02-04 FR FR04-b',
    ]);
    // default window 90: 01-05 is in the window of 02-02 (28 days back); its answer is the state held at the floor
    expect((await lines('decision_from=2026-02-02&decision_to=2026-02-02')).slice(0, 1)).toEqual(['2026-02-02 2026-01-05 DE DE05-floor']);
  });

  it('filters apply to every decision date', async () => {
    expect(await lines('decision_from=2026-02-03&decision_to=2026-02-05&window=1&country=FR')).toEqual([
      '2026-02-03 2026-02-02 FR FR02',
      '2026-02-04 2026-02-04 FR FR04-b',
      '2026-02-05 2026-02-04 FR FR04-b',
    ]);
  });

  it('metadata: total_count over all decision dates; data_latest_date and data_age_hours of as_of = decision_to', async () => {
    const r = await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-04&window=2&limit=1`);
    expect(r.body.count).toBe(1);
    expect(r.body.metadata.total_count).toBe(7);
    const single = await h.get(`${HISTORY_PATH}?as_of=2026-02-04`);
    expect(r.body.metadata.data_latest_date).toBe(single.body.metadata.data_latest_date);
    expect(r.body.metadata.data_latest_date).toBe('2026-02-04');
    expect(r.body.metadata.data_age_hours).toBe(single.body.metadata.data_age_hours);
    expect(r.body.metadata.decisions).toBe(4);
    expect(r.headers.get('x-total-count')).toBe('7');
  });

  it('pages: limit over the whole result, cursors resume mid-decision, and a chain may switch format', async () => {
    const query = 'decision_from=2026-02-01&decision_to=2026-02-06&window=2';
    const whole = await lines(query);
    for (const limit of [1, 2, 3, 4, 10]) {
      const got: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const r = await h.get(`${WF}?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
        got.push(...rowsOf(r).map((row) => `${String(row.decision_date)} ${String(row.date)} ${String(row.country)} ${String(row.tag)}`));
        expect(r.body.metadata.total_count).toBe(whole.length);
        if (!r.body.has_more) break;
        // every other page is fetched as CSV just to take its cursor
        const csv: Reply | null = page % 2 === 1 ? await h.get(`${WF}?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}&format=csv`) : null;
        cursor = csv === null ? r.body.next_cursor : csv.headers.get('x-next-cursor');
      }
      expect(got, `limit ${limit}`).toEqual(whole);
    }
  });

  it('every parameter but cursor, format and columns is part of the cursor query', async () => {
    const base = 'decision_from=2026-02-01&decision_to=2026-02-06&window=2&limit=1';
    const cursor = (await h.get(`${WF}?${base}`)).body.next_cursor as string;
    expect((await h.get(`${WF}?limit=1&window=2&decision_to=2026-02-06&decision_from=2026-02-01&format=csv&columns=value&cursor=${cursor}`)).status).toBe(200);
    for (const changed of ['decision_from=2026-01-31', 'decision_to=2026-02-07', 'step=2', 'window=3', 'limit=2', 'country=DE']) {
      const [name] = changed.split('=');
      const query = base.includes(`${name}=`) ? base.replace(new RegExp(`${name}=[^&]*`), changed) : `${base}&${changed}`;
      expectError(await h.get(`${WF}?${query}&cursor=${cursor}`), 400, 'invalid_cursor', 'cursor');
    }
  });

  it('a cursor only fits the query it came from', async () => {
    const r = await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-06&window=2&limit=1`);
    const cursor = r.body.next_cursor as string;
    expectError(await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-06&window=3&limit=1&cursor=${cursor}`), 400, 'invalid_cursor', 'cursor');
    expectError(await h.get(`${HISTORY_PATH}?limit=1&cursor=${cursor}`), 400, 'invalid_cursor', 'cursor');
    const plain = await h.get(`${HISTORY_PATH}?latest=false&limit=1`);
    expectError(
      await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-06&limit=1&cursor=${plain.body.next_cursor as string}`),
      400,
      'invalid_cursor',
      'cursor',
    );
  });

  it('columns= keeps decision_date, date, the series key and floor_applied; csv has decision_date first and floor_applied last', async () => {
    const r = await h.get(`${WF}?decision_from=2026-02-02&decision_to=2026-02-02&window=0&columns=value`);
    expect(r.body.data).toEqual([
      { decision_date: '2026-02-02', date: '2026-02-02', country: 'DE', value: 1, floor_applied: false },
      { decision_date: '2026-02-02', date: '2026-02-02', country: 'FR', value: 4, floor_applied: false },
    ]);
    const csv = await h.get(`${WF}?decision_from=2026-02-02&decision_to=2026-02-02&window=0&columns=value&format=csv`);
    expect(csv.text).toBe('decision_date,date,country,value,floor_applied\n2026-02-02,2026-02-02,DE,1,false\n2026-02-02,2026-02-02,FR,4,false\n');
  });

  it('bounds and refused parameters are 400s naming the parameter', async () => {
    const ok = 'decision_from=2026-02-01&decision_to=2026-02-06';
    expectError(await h.get(`${WF}?decision_to=2026-02-06`), 400, 'invalid_parameter', 'decision_from');
    expectError(await h.get(`${WF}?decision_from=2026-02-06`), 400, 'invalid_parameter', 'decision_to');
    expectError(await h.get(`${WF}?decision_from=2026-02-07&decision_to=2026-02-06`), 400, 'invalid_parameter', 'decision_from');
    expectError(await h.get(`${WF}?decision_from=2026-02-30&decision_to=2026-03-06`), 400, 'invalid_parameter', 'decision_from');
    for (const step of ['0', '367', '-1', '1.5', 'x']) expectError(await h.get(`${WF}?${ok}&step=${step}`), 400, 'invalid_parameter', 'step');
    for (const window of ['-1', '3661', 'x']) expectError(await h.get(`${WF}?${ok}&window=${window}`), 400, 'invalid_parameter', 'window');
    for (const limit of ['0', '100001']) expectError(await h.get(`${WF}?${ok}&limit=${limit}`), 400, 'invalid_parameter', 'limit');
    for (const p of ['as_of=2026-02-01', 'date_from=2026-02-01', 'date_to=2026-02-01', 'latest=true']) {
      expectError(await h.get(`${WF}?${ok}&${p}`), 400, 'invalid_parameter', p.split('=')[0]);
    }
    expectError(await h.get(`${WF}?${ok}&basin=atlantic`), 400, 'unknown_parameter', 'basin');
    // 10,000 decision dates is the most: 2000-01-01 + 9,999 days is 2027-05-18
    expect((await h.get(`${WF}?decision_from=2000-01-01&decision_to=2027-05-18&window=0&limit=1`)).status).toBe(200);
    const tooMany = await h.get(`${WF}?decision_from=2000-01-01&decision_to=2027-05-19&window=0`);
    expectError(tooMany, 400, 'invalid_parameter', 'decision_to');
    expect(tooMany.body.error.message).toBe('at most 10000 decision dates per request; this range and step give 10001');
    const refused = await h.get(`${WF}?${ok}&as_of=2026-02-01`);
    expect(refused.body.error.message).toContain('use decision_from, decision_to, step and window');
    expect((await h.get(`${WF}?decision_from=2000-01-01&decision_to=2027-05-19&step=2&window=0&limit=100000`)).status).toBe(200);
  });

  it('keys, paths and methods as for any data path', async () => {
    expectError(await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-06`, null), 401, 'unauthorized', undefined);
    expectError(await h.get(`/gbsi_us/system_stress/walk_forward?decision_from=2026-02-01&decision_to=2026-02-06`, EU_KEY), 403, 'forbidden', undefined);
    expectError(await h.get(`/glmi/marginality/walk_forward?decision_from=2026-02-01&decision_to=2026-02-06`, EU_KEY), 403, 'forbidden', undefined);
    expectError(await h.get(`/gbsi_eu/nope/walk_forward?decision_from=2026-02-01&decision_to=2026-02-06`), 404, 'not_found', undefined);
    const post = await h.get(`${WF}?decision_from=2026-02-01&decision_to=2026-02-06`, undefined, { method: 'POST' });
    expectError(post, 405, 'method_not_allowed', undefined);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  // Last: it publishes generation 2, which the tests above do not expect.
  it('a chain stays on its generation across a refresh (vintages too); a new chain sees the new one', async () => {
    const wf = `${WF}?decision_from=2026-02-01&decision_to=2026-02-06&window=2&limit=4`;
    const vin = `${HISTORY_PATH}/vintages?limit=2`;
    const before = [await lines('decision_from=2026-02-01&decision_to=2026-02-06&window=2'), (await h.get(`${HISTORY_PATH}/vintages`)).body.data];
    const firstPages = [await h.get(wf), await h.get(vin)];
    // ops publish generation 2: every value restated, DE 02-02 gone
    const restated = HISTORY_ROWS.filter((r) => r.tag !== 'DE02-v1' && r.tag !== 'DE02-v2').map((r) => ({ ...r, tag: `g2-${r.tag}` }));
    await writeGeneration(
      h.source,
      { productId: 'gbsi_eu', dataset: 'system_stress' },
      buildArrowSnapshot(pitSnapshot(['country'], restated), 'file'),
      2,
      '2026-11-02T00:00:00Z',
    );
    expect((await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' })).body.changed).toEqual(['gbsi_eu/system_stress']);
    for (const [i, path] of [wf, vin].entries()) {
      const pages = [firstPages[i]!];
      while (pages.at(-1)!.body.has_more) pages.push(await h.get(`${path}&cursor=${pages.at(-1)!.body.next_cursor as string}`));
      expect(pages.every((p) => p.headers.get('x-generation') === '1')).toBe(true);
      const rows = pages.flatMap((p) => rowsOf(p));
      if (i === 0) expect(rows.map((r) => `${String(r.decision_date)} ${String(r.date)} ${String(r.country)} ${String(r.tag)}`)).toEqual(before[0]);
      else expect(rows).toEqual(before[1]);
    }
    const fresh = await lines('decision_from=2026-02-01&decision_to=2026-02-06&window=2');
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.every((l) => l.includes(' g2-'))).toBe(true);
  });
});
