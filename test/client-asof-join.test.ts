/**
 * The typed client's asofJoin (contract 15): an apache-arrow Table or plain rows in, a
 * Table out, over uWS; its cells are those of the JSON answer to the same join.
 */
import { Dictionary, Int16, Int8, Table, TimestampMicrosecond, Uint32, Utf8, Float64, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PitcacheClient, PitcacheError } from '../src/client/index.js';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot } from './support/fixtures.js';
import { HISTORY_PATH, HISTORY_ROWS } from './support/history-fixture.js';

describe('PitcacheClient.asofJoin', () => {
  let h: Harness;
  let client: PitcacheClient;
  beforeAll(async () => {
    h = await startHarness({ datasets: [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], HISTORY_ROWS) }] });
    client = new PitcacheClient({ baseUrl: h.url, apiKey: TEST_KEY });
  });
  afterAll(() => h.close());

  // a Date holds milliseconds: the first event is a microsecond short of DE 02-02's revision
  const instants = ['2026-02-04T23:59:59.999Z', '2026-02-03T12:00:00Z', '2026-01-10T00:00:00Z', '2026-02-05T00:00:00Z'];
  const countries = ['DE', 'DE', 'DE', 'XX'];

  it('a Table in (sent as Arrow, types kept), a Table out: the JSON answer of the same join, cell by cell', async () => {
    const events = new Table({
      at: vectorFromArray(
        instants.map((t) => new Date(t)),
        new TimestampMicrosecond(),
      ),
      country: vectorFromArray(countries, new Utf8()),
      size: vectorFromArray([1.5, 2, 3, 4], new Float64()),
    });
    const t = await client.asofJoin('gbsi_eu', 'system_stress', events, { columns: ['tag', 'value'] });
    expect(t.schema.fields.map((f) => f.name)).toEqual(['at', 'country', 'size', 'date', 'value', 'tag', 'floor_applied']);
    expect(String(t.schema.fields[2]!.type)).toBe('Float64');
    expect(String(t.schema.fields.at(-1)!.type)).toBe('Bool');
    expect(t.getChild('tag')!.toArray()).toEqual(['DE02-v1', 'DE02-v1', 'DE05-floor', null]);
    expect([...t.getChild('floor_applied')!]).toEqual([false, false, true, false]);
    // the JSON answer to the same events, sent as CSV
    const csv = `at,country,size\n${instants.map((a, i) => `${a},${countries[i]},${[1.5, 2, 3, 4][i]}`).join('\n')}\n`;
    const json = await h.get(`${HISTORY_PATH}/asof_join?columns=tag,value`, TEST_KEY, { method: 'POST', body: csv, headers: { 'content-type': 'text/csv' } });
    const rows = json.body.data as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.tag)).toEqual(t.getChild('tag')!.toArray());
    expect(rows.map((r) => r.value)).toEqual([...t.getChild('value')!]);
  });

  it('a Table with dictionary columns (the series key among them): each comes back as the dictionary sent, the join as with Utf8', async () => {
    const at = vectorFromArray(
      instants.map((t) => new Date(t)),
      new TimestampMicrosecond(),
    );
    const events = new Table({
      at,
      country: vectorFromArray(countries, new Dictionary(new Utf8(), new Int8())),
      venue: vectorFromArray(['XETR', null, 'XPAR', 'XETR'], new Dictionary(new Utf8(), new Int16())),
      lots: vectorFromArray([1, 2, 1, null], new Dictionary(new Uint32(), new Int8())),
    });
    const t = await client.asofJoin('gbsi_eu', 'system_stress', events, { columns: 'tag' });
    for (const name of ['country', 'venue', 'lots'] as const) {
      const sent = events.schema.fields.find((f) => f.name === name)!.type as Dictionary;
      const got = t.schema.fields.find((f) => f.name === name)!.type as Dictionary;
      expect(String(got), name).toBe(String(sent));
      expect(String(got.indices), name).toBe(String(sent.indices));
      expect([...t.getChild(name)!], name).toEqual([...events.getChild(name)!]);
    }
    const plain = await client.asofJoin('gbsi_eu', 'system_stress', new Table({ at, country: vectorFromArray(countries, new Utf8()) }), { columns: 'tag' });
    expect(t.getChild('tag')!.toArray()).toEqual(plain.getChild('tag')!.toArray());
    expect(t.getChild('tag')!.toArray()).toEqual(['DE02-v1', 'DE02-v1', 'DE05-floor', null]);
  });

  it('rows in (sent as JSON), a Table out; an error is a PitcacheError with the contract code', async () => {
    const t = await client.asofJoin(
      'gbsi_eu',
      'system_stress',
      instants.map((at, i) => ({ at: i === 0 ? new Date('2026-02-04T12:00:00Z') : at, country: countries[i]!, note: `n${i}` })),
      { columns: 'tag', before_floor: 'skip' },
    );
    expect(t.numRows).toBe(4);
    expect(t.getChild('note')!.toArray()).toEqual(['n0', 'n1', 'n2', 'n3']);
    expect(t.getChild('tag')!.toArray()).toEqual(['DE02-v1', 'DE02-v1', null, null]);
    const err = await client.asofJoin('gbsi_eu', 'system_stress', [{ at: '2026-01-01', country: 'DE' }], { before_floor: 'error' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PitcacheError);
    expect((err as PitcacheError).code).toBe('before_floor');
  });
});
