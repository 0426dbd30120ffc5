import { writeArrowPage } from '../format/arrow-page.js';
import type { OutputColumn } from '../format/page-view.js';
import type { ByteWriter } from '../render/byte-writer.js';
import { CsvRowRenderer } from '../render/csv-rows.js';
import { RowCache } from '../render/row-cache.js';
import { RowRenderer } from '../render/row-renderer.js';
import { SERIES_KEY_METADATA } from '../snapshot/arrow-writer.js';
import type { Table } from '../store/table.js';
import type { ExtensionValue } from '../render/envelope.js';

/** What a page's envelope needs besides the clock and the request id. */
export interface PageMeta {
  readonly count: number;
  readonly totalCount: number;
  readonly nextCursor: string | null;
  readonly dataLatestDate: number | null;
  /** greatest visible str_observed_at (µs), for data_age_hours */
  readonly maxObserved: number | null;
  readonly asOfUs: number | null;
  readonly generation: number;
  readonly extensions: ReadonlyArray<readonly [string, ExtensionValue]>;
}

/** Compiled writers kept per table (so per generation) and projection; a projection is a handful of column lists at most. */
const MAX_LAYOUTS_PER_TABLE = 32;

/**
 * One writer per format over the page's physical rows: JSON (the generated row writer, with
 * the row cache), CSV and Arrow. Writers are compiled once per (table, projection) and kept
 * with the table, so a new generation drops its writers with it.
 */
export class PageWriters {
  private readonly rowCache: RowCache | null;
  private readonly json$ = new WeakMap<Table, Map<string, RowRenderer>>();
  private readonly csv$ = new WeakMap<Table, Map<string, CsvRowRenderer>>();

  constructor(rowCacheBytes: number) {
    this.rowCache = rowCacheBytes > 0 ? new RowCache(rowCacheBytes) : null;
  }

  json(table: Table, projection: readonly number[] | null, out: ByteWriter, rows: Int32Array, count: number): void {
    const r = layout(this.json$, table, projection, (columns) => new RowRenderer({ columns }));
    if (this.rowCache === null) r.writeRows(out, rows, count);
    else r.writeRowsCached(out, rows, count, this.rowCache);
  }

  csv(table: Table, projection: readonly number[] | null, out: ByteWriter, rows: Int32Array, count: number): void {
    const r = layout(this.csv$, table, projection, (columns) => new CsvRowRenderer({ columns }));
    r.writeHeader(out);
    r.writeRows(out, rows, count);
  }

  arrow(table: Table, projection: readonly number[] | null, out: ByteWriter, rows: Int32Array, count: number, envelopeJson: string): void {
    const columns: OutputColumn[] = pick(table, projection).map((column) => ({ column, at: 'row' }));
    const meta = new Map([
      [SERIES_KEY_METADATA, JSON.stringify(table.seriesKey)],
      ['pitcache.envelope', envelopeJson],
    ]);
    out.bytes(writeArrowPage({ columns, rows, count, seriesKey: table.seriesKey }, meta));
  }
}

function pick(table: Table, projection: readonly number[] | null): Table['columns'] {
  return projection === null ? table.columns : projection.map((i) => table.columns[i]!);
}

function layout<W>(store: WeakMap<Table, Map<string, W>>, table: Table, projection: readonly number[] | null, make: (columns: Table['columns']) => W): W {
  let byKey = store.get(table);
  if (byKey === undefined) store.set(table, (byKey = new Map()));
  const key = projection === null ? '*' : projection.join('.');
  let w = byKey.get(key);
  if (w === undefined) {
    if (byKey.size >= MAX_LAYOUTS_PER_TABLE) byKey.delete(byKey.keys().next().value!);
    w = make(pick(table, projection));
    byKey.set(key, w);
  }
  return w;
}
