/**
 * Spec 4.4 and contract 2: limit, has_more / next_cursor, count vs total_count, cursor
 * chains and the cursor's binding to its query.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf, tagsOf, type DataRow, type PitRow } from './support/fixtures.js';

const ZONES = ['DE', 'FR', 'NL'];
const DAYS = 100;
const dateOf = (i: number) => new Date(Date.UTC(2026, 3, 1 + i)).toISOString().slice(0, 10);

/** FR dates whose only version is first observed on 2026-09-01: under an earlier as_of they are holes mid-page. */
const lateOnly = (i: number, z: string) => z === 'FR' && i % 7 === 3;

/**
 * 3 zones x 100 dates; every 10th date of DE is restated on 2026-09-01 (tag suffix "/r");
 * FR keys with i % 7 = 3 exist only from 2026-09-01 (suffix "/late").
 */
function gridRows(column: string): PitRow[] {
  const rows: PitRow[] = [];
  for (let i = 0; i < DAYS; i++) {
    const date = dateOf(i);
    for (const z of ZONES) {
      const late = lateOnly(i, z);
      rows.push({ key: { [column]: z }, date, eff: date, obs: late ? '2026-09-01T00:00:00Z' : `${date}T06:00:00Z`, tag: `${date}/${z}${late ? '/late' : ''}` });
    }
    if (i % 10 === 0) rows.push({ key: { [column]: 'DE' }, date, eff: date, obs: '2026-09-01T00:00:00Z', tag: `${date}/DE/r` });
  }
  // Rows may come in any order (contract 6): a fixed stride permutation scatters them.
  const n = rows.length;
  return rows.map((_, j) => rows[(j * 37) % n]!);
}

/** The unpaged latest=false answer, derived from how the rows were written. */
function expectedAll(asOfBeforeRestatement: boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < DAYS; i++) {
    for (const z of ZONES) {
      if (lateOnly(i, z)) {
        if (!asOfBeforeRestatement) out.push(`${dateOf(i)}/${z}/late`);
      } else out.push(`${dateOf(i)}/${z}${z === 'DE' && i % 10 === 0 && !asOfBeforeRestatement ? '/r' : ''}`);
    }
  }
  return out;
}

describe('spec 4.4 / contract 2: pagination', () => {
  let h: Harness;
  const PEMI = '/pemi/grid_stress';

  beforeAll(async () => {
    expect(gridRows('x').length).toBe(310);
    h = await startInProcessHarness({
      datasets: [
        { productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], gridRows('bidding_zone'), { batchRows: 64 }) },
        { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], gridRows('country')) },
      ],
    });
  });
  afterAll(() => h.close());

  /** Follows next_cursor to the end, checking the per-page envelope; returns every row. */
  async function chain(path: string, query: string, limit: number): Promise<{ rows: DataRow[]; pages: number; total: number }> {
    const rows: DataRow[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let total = -1;
    do {
      const r = await h.get(`${path}?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      const data = rowsOf(r);
      pages++;
      expect(r.body.count).toBe(data.length);
      expect(data.length).toBeLessThanOrEqual(limit);
      if (total < 0) total = r.body.metadata.total_count;
      expect(r.body.metadata.total_count, 'total_count is the same on every page').toBe(total);
      expect(r.body.has_more).toBe('next_cursor' in r.body);
      if (r.body.has_more) {
        expect(typeof r.body.next_cursor).toBe('string');
        expect(data.length).toBe(limit);
      }
      rows.push(...data);
      cursor = r.body.has_more ? (r.body.next_cursor as string) : null;
      expect(pages).toBeLessThan(1000);
    } while (cursor !== null);
    return { rows, pages, total };
  }

  it('limit defaults to 200; count is the page, total_count all matching rows', async () => {
    expect(expectedAll(false).length).toBeGreaterThan(200);
    const r = await h.get(`${PEMI}?latest=false`);
    expect(tagsOf(r)).toEqual(expectedAll(false).slice(0, 200));
    expect(r.body.count).toBe(200);
    expect(r.body.has_more).toBe(true);
    expect(typeof r.body.next_cursor).toBe('string');
    expect(r.body.metadata.total_count).toBe(300);
  });

  it('limit accepts 1..10000', async () => {
    const one = await h.get(`${PEMI}?latest=false&limit=1`);
    expect(tagsOf(one)).toEqual([`${dateOf(0)}/DE/r`]);
    expect(one.body.has_more).toBe(true);
    const max = await h.get(`${PEMI}?latest=false&limit=10000`);
    expect(tagsOf(max)).toEqual(expectedAll(false));
    expect(max.body.count).toBe(300);
  });

  it('limit outside 1..10000 is a 400 naming limit', async () => {
    for (const v of ['0', '10001', '-1', 'abc', '1.5', '']) {
      expectError(await h.get(`${PEMI}?limit=${v}`), 400, 'invalid_parameter', 'limit');
    }
  });

  it('has_more and next_cursor appear only when more rows follow', async () => {
    const exact = await h.get(`${PEMI}?latest=false&limit=300`);
    expect(exact.body.count).toBe(300);
    expect(exact.body.has_more).toBe(false);
    expect('next_cursor' in exact.body).toBe(false);
    const short = await h.get(`${PEMI}?latest=false&limit=299`);
    expect(short.body.has_more).toBe(true);
    expect(typeof short.body.next_cursor).toBe('string');
    const latest = await h.get(PEMI);
    expect(latest.body.count).toBe(3);
    expect(latest.body.has_more).toBe(false);
    expect('next_cursor' in latest.body).toBe(false);
  });

  it('a full cursor chain equals the unpaged answer (latest=false, 7 per page)', async () => {
    const { rows, pages, total } = await chain(PEMI, 'latest=false', 7);
    expect(rows.map((r) => r['tag'])).toEqual(expectedAll(false));
    expect(pages).toBe(Math.ceil(300 / 7));
    expect(total).toBe(300);
  });

  it('a full cursor chain equals the unpaged answer under as_of, filters, date bounds and latest=true', async () => {
    const queries = [
      'latest=false&as_of=2026-08-01',
      'date_from=2026-04-10&date_to=2026-05-20&bidding_zone=NL,DE',
      'latest=true',
      'latest=true&date_to=2026-05-01&as_of=2026-08-01',
    ];
    for (const q of queries) {
      const whole = await h.get(`${PEMI}?${q}&limit=10000`);
      expect(whole.body.has_more).toBe(false);
      for (const limit of [1, 7, 64]) {
        const { rows, total } = await chain(PEMI, q, limit);
        expect(rows, `${q} limit=${limit}`).toEqual(whole.body.data);
        expect(total).toBe(whole.body.metadata.total_count);
      }
    }
    // Hand-derived spot checks of two of those answers.
    const past = await h.get(`${PEMI}?latest=false&as_of=2026-08-01&limit=10000`);
    expect(tagsOf(past)).toEqual(expectedAll(true));
    // 14 FR keys (i = 3, 10, ..., 94) have no version yet.
    expect(past.body.metadata.total_count).toBe(300 - 14);
    expect(tagsOf(await h.get(`${PEMI}?latest=true&limit=10000`))).toEqual([`${dateOf(99)}/DE`, `${dateOf(99)}/FR`, `${dateOf(99)}/NL`]);
  });

  it('a cursor is valid with the same parameters in another order', async () => {
    const first = await h.get(`${PEMI}?latest=false&limit=7&as_of=2026-08-01`);
    const cursor = encodeURIComponent(first.body.next_cursor as string);
    const again = await h.get(`${PEMI}?as_of=2026-08-01&cursor=${cursor}&limit=7&latest=false`);
    expect(tagsOf(again)).toEqual(expectedAll(true).slice(7, 14));
  });

  it('a cursor reused with different parameters is a 400 invalid_cursor', async () => {
    const first = await h.get(`${PEMI}?latest=false&limit=7`);
    const cursor = encodeURIComponent(first.body.next_cursor as string);
    for (const q of [
      'latest=false&limit=8',
      'latest=false&limit=7&as_of=2026-08-01',
      'latest=false&limit=7&bidding_zone=DE',
      'latest=false&limit=7&date_to=2026-06-01',
      'limit=7',
      '',
    ]) {
      expectError(await h.get(`${PEMI}?${q}${q === '' ? '' : '&'}cursor=${cursor}`), 400, 'invalid_cursor', 'cursor');
    }
  });

  it('a garbage, altered or truncated cursor is a 400 invalid_cursor', async () => {
    const first = await h.get(`${PEMI}?latest=false&limit=7`);
    const token = first.body.next_cursor as string;
    const flip = (t: string, i: number) => t.slice(0, i) + (t[i] === 'A' ? 'B' : 'A') + t.slice(i + 1);
    const bad = ['garbage', 'AAAA', flip(token, 0), flip(token, 10), token.slice(0, -2), `${token}AAAA`, token.split('').reverse().join('')];
    for (const c of bad) {
      expect(c).not.toBe(token);
      expectError(await h.get(`${PEMI}?latest=false&limit=7&cursor=${encodeURIComponent(c)}`), 400, 'invalid_cursor', 'cursor');
    }
  });

  it('a cursor from another dataset is a 400 invalid_cursor', async () => {
    const eu = await h.get('/gbsi_eu/system_stress?latest=false&limit=7');
    expect(eu.body.has_more).toBe(true);
    const fromEu = encodeURIComponent(eu.body.next_cursor as string);
    expectError(await h.get(`${PEMI}?latest=false&limit=7&cursor=${fromEu}`), 400, 'invalid_cursor', 'cursor');
    const pemi = await h.get(`${PEMI}?latest=false&limit=7`);
    const fromPemi = encodeURIComponent(pemi.body.next_cursor as string);
    expectError(await h.get(`/gbsi_eu/system_stress?latest=false&limit=7&cursor=${fromPemi}`), 400, 'invalid_cursor', 'cursor');
  });
});
