/**
 * Contract 4: the `metadata` fields of spec 2.4 (retrieved_at, total_count, record_id,
 * data_latest_date, data_age_hours).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessLog } from '../src/log/access-log.js';
import type { ManualClock } from '../src/time/clock.js';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { RECORD_ID, pitSnapshot, tagsOf, type PitRow } from './support/fixtures.js';

const PATH = '/gbsi_eu/system_stress';
const HOUR_MS = 3_600_000;

// gbsi_eu's floor (2026-01-13) is before every row, so it plays no part here.
const ROWS: PitRow[] = [
  { key: { country: 'DE' }, date: '2026-04-01', eff: '2026-04-02', obs: '2026-04-02T06:00:00Z', tag: 'DE-1' },
  { key: { country: 'DE' }, date: '2026-04-03', eff: '2026-04-04', obs: '2026-04-04T06:00:00Z', tag: 'DE-3' },
  { key: { country: 'FR' }, date: '2026-04-05', eff: '2026-04-06', obs: '2026-04-06T06:00:00Z', tag: 'FR-5' },
  // A restatement of an old date: the greatest observed instant, but not the greatest date.
  { key: { country: 'DE' }, date: '2026-04-01', eff: '2026-04-02', obs: '2026-05-01T00:00:00Z', tag: 'DE-1r' },
];

describe('contract 4: response metadata', () => {
  let h: Harness;
  let clock: ManualClock;
  /** access-log lines, one write per request (flushBytes 1) */
  const logLines: string[] = [];
  const START = Date.parse('2026-11-20T12:00:00Z');

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], ROWS) }],
      server: { accessLog: true, accessLogTo: new AccessLog({ sink: { write: (chunk: string) => logLines.push(chunk) }, flushBytes: 1 }) },
    });
    clock = h.clock as ManualClock;
  });
  afterAll(() => h.close());

  it('retrieved_at is ISO 8601 UTC with milliseconds and Z, from the server clock', async () => {
    clock.set(START);
    expect((await h.get(PATH)).body.metadata.retrieved_at).toBe('2026-11-20T12:00:00.000Z');
    clock.set(START + 1234);
    expect((await h.get(PATH)).body.metadata.retrieved_at).toBe('2026-11-20T12:00:01.234Z');
    clock.set(START);
  });

  it('total_count is the number of matching rows across all pages', async () => {
    const r = await h.get(`${PATH}?latest=false&limit=1`);
    expect(r.body.count).toBe(1);
    expect(r.body.metadata.total_count).toBe(3);
    expect((await h.get(`${PATH}?country=DE&latest=false`)).body.metadata.total_count).toBe(2);
    expect((await h.get(`${PATH}?as_of=2026-04-05`)).body.metadata.total_count).toBe(1);
  });

  it('record_id is req_ + at least 16 of [0-9a-z], equals x-request-id, unique per request (errors included)', async () => {
    const replies = [await h.get(PATH), await h.get(PATH), await h.get(`${PATH}?limit=0`), await h.get('/nope'), await h.get(PATH, null)];
    const ids = replies.map((r) => (r.status === 200 ? r.body.metadata.record_id : r.body.record_id) as string);
    replies.forEach((r, i) => {
      expect(ids[i]).toMatch(RECORD_ID);
      expect(r.headers.get('x-request-id')).toBe(ids[i]);
    });
    expect(new Set(ids).size).toBe(ids.length);
    // The same id is in the server's log.
    const logged = logLines.join('');
    for (const id of ids) expect(logged).toContain(`"${id}"`);
  });

  it('data_latest_date is the greatest date among resolved rows under as_of, filters ignored', async () => {
    expect((await h.get(PATH)).body.metadata.data_latest_date).toBe('2026-04-05');
    expect((await h.get(`${PATH}?country=DE`)).body.metadata.data_latest_date).toBe('2026-04-05');
    expect((await h.get(`${PATH}?country=XX`)).body.metadata.data_latest_date).toBe('2026-04-05');
    // FR-5 is effective 04-06: under as_of 04-05 the latest visible date is DE's 04-03.
    expect((await h.get(`${PATH}?as_of=2026-04-05`)).body.metadata.data_latest_date).toBe('2026-04-03');
    expect((await h.get(`${PATH}?as_of=2026-04-05&country=FR`)).body.metadata.data_latest_date).toBe('2026-04-03');
  });

  it('data_latest_date is null when nothing is visible', async () => {
    const r = await h.get(`${PATH}?as_of=2026-01-01`);
    expect(tagsOf(r)).toEqual([]);
    expect(r.body.metadata.data_latest_date).toBeNull();
  });

  it('data_age_hours without as_of: from the greatest visible str_observed_at to retrieved_at (filters ignored)', async () => {
    clock.set(START);
    // 2026-05-01T00:00Z (DE-1r) to 2026-11-20T12:00Z: 203 days and 12 hours.
    expect((await h.get(PATH)).body.metadata.data_age_hours).toBe(203 * 24 + 12);
    expect((await h.get(`${PATH}?country=FR`)).body.metadata.data_age_hours).toBe(203 * 24 + 12);
    clock.set(START + 90 * 60_000);
    expect((await h.get(PATH)).body.metadata.data_age_hours).toBe(203 * 24 + 13.5);
    clock.set(START);
  });

  it('data_age_hours with as_of: from the greatest visible str_observed_at to the instant T', async () => {
    // Visible at 04-05T12:00Z: DE-1 and DE-3; the greatest observed is 04-04T06:00Z.
    expect((await h.get(`${PATH}?as_of=2026-04-05T12:00:00Z`)).body.metadata.data_age_hours).toBe(30);
    // A date means the end of the day: 04-05T23:59:59.999999Z, one µs short of 42 hours.
    const endOfDay = (await h.get(`${PATH}?as_of=2026-04-05`)).body.metadata.data_age_hours as number;
    expect(endOfDay).toBeCloseTo(42 - 1 / (HOUR_MS * 1000), 9);
    expect(endOfDay).toBeLessThan(42);
    // After the restatement: 05-01T00:00Z to 05-02T00:00Z.
    expect((await h.get(`${PATH}?as_of=2026-05-02T00:00:00Z`)).body.metadata.data_age_hours).toBe(24);
    // The clock plays no part when as_of is given.
    clock.set(START + 5 * HOUR_MS);
    expect((await h.get(`${PATH}?as_of=2026-04-05T12:00:00Z`)).body.metadata.data_age_hours).toBe(30);
    clock.set(START);
  });
});
