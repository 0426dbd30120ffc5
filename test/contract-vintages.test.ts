/**
 * Contract 11: `GET /{product}/{dataset}/vintages`, on the hand-written history of
 * support/history-fixture.ts (read it first: every expectation below follows from it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf } from './support/fixtures.js';
import { HISTORY_PATH, HISTORY_ROWS } from './support/history-fixture.js';

const V = `${HISTORY_PATH}/vintages`;

describe('contract 11: vintages', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({ datasets: [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], HISTORY_ROWS) }] });
  });
  afterAll(() => h.close());

  /** `date country tag visible_from visible_to` of every row. */
  async function lines(query: string): Promise<string[]> {
    return rowsOf(await h.get(`${V}?${query}`)).map(
      (r) => `${String(r.date)} ${String(r.country)} ${String(r.tag)} ${String(r.visible_from)} ${String(r.visible_to)}`,
    );
  }

  it('every version some as_of picks, with the interval it is the answer for; order date, series, visible_from', async () => {
    expect(await lines('')).toEqual([
      // before the floor: both versions are effective 01-06; only the state held at the floor is ever answered
      '2026-01-05 DE DE05-floor 2026-01-06T00:00:00.000000Z null',
      '2026-02-02 DE DE02-v1 2026-02-02T10:00:00.000000Z 2026-02-04T23:59:59.999999Z',
      '2026-02-02 DE DE02-v2 2026-02-04T23:59:59.999999Z null',
      '2026-02-02 FR FR02 2026-02-02T00:00:00.000000Z null',
      '2026-02-03 DE DE03 2026-02-05T00:00:00.000000Z null',
      // a full tie: the later row is the answer from the start, the earlier never
      '2026-02-04 FR FR04-b 2026-02-04T12:00:00.000000Z null',
    ]);
    const r = await h.get(`${V}?date_from=2026-02-02&date_to=2026-02-02&country=DE`);
    expect(Object.keys(r.body.data[0])).toEqual([
      'date',
      'str_effective_at',
      'str_observed_at',
      'str_ingested_at',
      'model_version',
      'country',
      'value',
      'tag',
      'visible_from',
      'visible_to',
    ]);
    expect(r.body.data.map((x: { tag: string }) => x.tag)).toEqual(['DE02-v1', 'DE02-v2']);
    expect(r.body.metadata.total_count).toBe(2);
  });

  it('release=first keeps each key first release', async () => {
    expect((await lines('release=first')).map((l) => l.split(' ')[2])).toEqual(['DE05-floor', 'DE02-v1', 'FR02', 'DE03', 'FR04-b']);
    expect((await lines('release=all')).length).toBe(6);
  });

  it('as_of=T: only versions visible_from <= T, and a visible_to after T reads null', async () => {
    expect(await lines('as_of=2026-02-04T00:00:00Z&date_from=2026-02-01')).toEqual([
      '2026-02-02 DE DE02-v1 2026-02-02T10:00:00.000000Z null',
      '2026-02-02 FR FR02 2026-02-02T00:00:00.000000Z null',
    ]);
    // the end of 02-04 is the revision's first instant: v1's interval has closed, v2 and FR04-b are known
    expect(await lines('as_of=2026-02-04&date_from=2026-02-01')).toEqual([
      '2026-02-02 DE DE02-v1 2026-02-02T10:00:00.000000Z 2026-02-04T23:59:59.999999Z',
      '2026-02-02 DE DE02-v2 2026-02-04T23:59:59.999999Z null',
      '2026-02-02 FR FR02 2026-02-02T00:00:00.000000Z null',
      '2026-02-04 FR FR04-b 2026-02-04T12:00:00.000000Z null',
    ]);
    expect(await lines('as_of=2026-02-04T23:59:59.999998Z&release=first&country=DE&date_from=2026-02-01')).toEqual([
      '2026-02-02 DE DE02-v1 2026-02-02T10:00:00.000000Z null',
    ]);
    const r = await h.get(`${V}?as_of=2026-02-04`);
    expect(r.body.metadata.as_of).toBe('2026-02-04T23:59:59.999999Z');
    expect(r.body.metadata.release).toBe('all');
  });

  it('pages resume inside a key (one key lists several versions)', async () => {
    const whole = await lines('');
    for (const limit of [1, 2, 4]) {
      const got: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const r = await h.get(`${V}?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
        got.push(...rowsOf(r).map((x) => `${String(x.date)} ${String(x.country)} ${String(x.tag)} ${String(x.visible_from)} ${String(x.visible_to)}`));
        expect(r.body.metadata.total_count).toBe(6);
        if (!r.body.has_more) break;
        cursor = r.body.next_cursor;
      }
      expect(got, `limit ${limit}`).toEqual(whole);
    }
  });

  it('csv and arrow carry visible_from and visible_to last (null as an empty field)', async () => {
    const csv = await h.get(`${V}?date_from=2026-02-02&date_to=2026-02-02&country=DE&columns=tag&format=csv`);
    expect(csv.text).toBe(
      'date,country,tag,visible_from,visible_to\n2026-02-02,DE,DE02-v1,2026-02-02T10:00:00.000000Z,2026-02-04T23:59:59.999999Z\n2026-02-02,DE,DE02-v2,2026-02-04T23:59:59.999999Z,\n',
    );
  });

  it('every parameter but cursor, format and columns is part of the cursor query', async () => {
    const cursor = (await h.get(`${V}?limit=1`)).body.next_cursor as string;
    expect((await h.get(`${V}?limit=1&format=csv&columns=tag&cursor=${cursor}`)).status).toBe(200);
    for (const changed of ['date_from=2026-01-01', 'date_to=2026-12-31', 'as_of=2026-12-31', 'release=first', 'release=all', 'limit=2', 'country=DE']) {
      const query = changed.startsWith('limit') ? changed : `limit=1&${changed}`;
      const r = await h.get(`${V}?${query}&cursor=${cursor}`);
      // release=all is the default: the same query as without it
      if (changed === 'release=all') expect(r.status).toBe(200);
      else expectError(r, 400, 'invalid_cursor', 'cursor');
    }
  });

  it('bad parameters are 400s naming them', async () => {
    const release = await h.get(`${V}?release=last`);
    expectError(release, 400, 'invalid_parameter', 'release');
    expect(release.body.error.message).toBe('release must be all or first');
    expect((await h.get(`${V}?latest=true`)).body.error.message).toContain('latest does not apply to vintages');
    expectError(await h.get(`${V}?latest=true`), 400, 'invalid_parameter', 'latest');
    expectError(await h.get(`${V}?as_of=yesterday`), 400, 'invalid_parameter', 'as_of');
    expectError(await h.get(`${V}?date_from=2026-02-03&date_to=2026-02-02`), 400, 'invalid_parameter', 'date_from');
    for (const limit of ['0', '100001']) expectError(await h.get(`${V}?limit=${limit}`), 400, 'invalid_parameter', 'limit');
    expect((await h.get(`${V}?limit=100000`)).status).toBe(200);
    expectError(await h.get(`${V}?decision_from=2026-02-01`), 400, 'unknown_parameter', 'decision_from');
    const wf = await h.get(`${HISTORY_PATH}/walk_forward?decision_from=2026-02-01&decision_to=2026-02-06&limit=1`);
    expectError(await h.get(`${V}?limit=1&cursor=${wf.body.next_cursor as string}`), 400, 'invalid_cursor', 'cursor');
  });
});
