import { gzipSync } from 'node:zlib';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import fc from 'fast-check';
import { headersArb } from './headers.js';
import { queryArb, validQueryArb } from './query.js';
import type { FuzzCase, FuzzDataset, FuzzWorld } from './types.js';
import { adversarial, validValues } from './values.js';

/**
 * `POST .../asof_join` with generated events (contract 15): CSV, JSON or Arrow bodies whose
 * columns are right, missing, repeated or named like a dataset column, whose cells are valid
 * or adversarial, sent plain, gzipped, as broken gzip, cut short, or under another
 * Content-Type or Content-Encoding.
 */

const AT_VALUES = ['2026-03-01', '2026-03-01T12:00:00Z', '2021-01-01', '2026-11-20T23:59:59.999999Z'];

/** An event table: column names, and rows of cells (null: the cell is left out or null). */
interface Events {
  readonly columns: string[];
  readonly rows: Array<Array<string | null>>;
}

function eventsArb(d: FuzzDataset): fc.Arbitrary<Events> {
  const keys = [...d.filters.keys()];
  // Half the tables have only valid cells (so joins are answered), the rest any cells.
  const cell = (column: string, clean: boolean): fc.Arbitrary<string | null> => {
    const valid = column === 'at' ? AT_VALUES : (d.filters.get(column) ?? validValues(column, d));
    const good = valid.length > 0 ? fc.constantFrom(...valid) : fc.constant('x');
    if (clean) return good;
    return fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: adversarial(valid), weight: 1 }, { arbitrary: fc.constant(null), weight: 1 });
  };
  // Mostly the right columns; now and then one missing, repeated, extra or named like a dataset column.
  const columns = fc.oneof(
    { arbitrary: fc.constant<string[]>(['at', ...keys]), weight: 4 },
    { arbitrary: fc.constant<string[]>(['at', ...keys, 'note']), weight: 1 },
    { arbitrary: fc.constantFrom(...['at', ...keys]).map((drop) => ['at', ...keys].filter((c) => c !== drop)), weight: 1 },
    { arbitrary: fc.constantFrom(...d.columns).map((c) => ['at', ...keys, c]), weight: 1 },
    { arbitrary: fc.constant<string[]>(['at', 'at', ...keys]), weight: 1 },
  );
  return fc
    .tuple(columns, fc.boolean())
    .chain(([cols, clean]) =>
      fc.array(fc.tuple(...cols.map((c) => cell(c, clean))), { maxLength: 30 }).map((rows): Events => ({ columns: cols, rows: rows.map((r) => [...r]) })),
    );
}

const csvCell = (v: string | null): string => (v === null ? '' : /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

function encodeEvents(e: Events, as: 'csv' | 'json' | 'arrow'): Buffer {
  if (as === 'csv') return Buffer.from([e.columns, ...e.rows].map((r) => r.map(csvCell).join(',')).join('\n') + '\n');
  if (as === 'json') {
    return Buffer.from(JSON.stringify(e.rows.map((r) => Object.fromEntries(e.columns.flatMap((c, i) => (r[i] === null ? [] : [[c, r[i]]]))))));
  }
  // Arrow: every column Utf8 (an `at` as text is refused or read, either is an answer); repeated names get a suffix.
  const arrays: Record<string, string[]> = {};
  e.columns.forEach((c, i) => (arrays[c in arrays ? `${c}_${i}` : c] = e.rows.map((r) => r[i] ?? '')));
  return Buffer.from(tableToIPC(tableFromArrays(arrays), 'stream'));
}

const TYPES = { csv: 'text/csv', json: 'application/json', arrow: 'application/vnd.apache.arrow.stream' } as const;

export function joinCase(w: FuzzWorld): fc.Arbitrary<FuzzCase> | null {
  const endpoint = w.dataEndpoints.find((e) => e.suffix === '/asof_join');
  if (endpoint === undefined) return null;
  return fc
    .constantFrom(...w.datasets)
    .chain((d) =>
      fc.record({
        d: fc.constant(d),
        events: eventsArb(d),
        as: fc.constantFrom('csv', 'json', 'arrow') as fc.Arbitrary<'csv' | 'json' | 'arrow'>,
        // The body's own type mostly; another, a parameterised one or none now and then.
        type: fc.oneof(
          { arbitrary: fc.constant(null), weight: 6 },
          {
            arbitrary: fc.constantFrom('text/csv; charset=utf-8', 'text/plain', 'application/octet-stream', 'multipart/form-data', ';', 'TEXT/CSV'),
            weight: 1,
          },
        ),
        encoding: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'gzip', 'gzip', 'broken-gzip', 'br', 'gzip, gzip'),
        cut: fc.option(fc.nat(), { nil: null, freq: 5 }),
        // Mostly a valid query and plain headers, so the body is what is judged.
        query: fc.oneof(
          { arbitrary: fc.constant(''), weight: 3 },
          { arbitrary: validQueryArb(endpoint.params, { ...d, filters: new Map() }), weight: 2 },
          { arbitrary: queryArb(endpoint.params, d), weight: 1 },
        ),
        headers: fc.oneof(
          { arbitrary: fc.constant<Array<[string, string]>>([['x-api-key', w.keys.main]]), weight: 3 },
          { arbitrary: headersArb(w), weight: 1 },
        ),
      }),
    )
    .map(({ d, events, as, type, encoding, cut, query, headers }): FuzzCase => {
      let body = encodeEvents(events, as);
      if (cut !== null && body.length > 0) body = body.subarray(0, cut % body.length);
      if (encoding === 'gzip') body = gzipSync(body);
      if (encoding === 'broken-gzip') body = Buffer.concat([gzipSync(body).subarray(0, 12), Buffer.from('not gzip')]);
      const h: Array<[string, string]> = headers.filter(([n]) => n !== 'content-type');
      h.push(['content-type', type ?? TYPES[as]]);
      if (encoding !== 'none') h.push(['content-encoding', encoding === 'broken-gzip' ? 'gzip' : encoding]);
      return { kind: 'asof_join', request: { method: 'POST', target: `/${d.productId}/${d.dataset}/asof_join${query}`, headers: h, body } };
    });
}
